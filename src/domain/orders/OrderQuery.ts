import type { PetId } from "../pets/PetId.ts"
import type { OrderId } from "./OrderId.ts"
import type { OrderStatus } from "./OrderStatus.ts"

/**
 * A keyset page request: up to `limit` orders with an id greater than `after`, in
 * ascending id order, optionally only those with `status` and for `petId`.
 */
export interface OrderQuery {
  readonly limit: number
  readonly status?: OrderStatus | undefined
  readonly petId?: PetId | undefined
  readonly after?: OrderId | undefined
}
