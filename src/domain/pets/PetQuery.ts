import type { PetId } from "./PetId.ts"
import type { PetStatus } from "./PetStatus.ts"

/**
 * A keyset page request: up to `limit` pets with an id greater than `after`,
 * in ascending id order, optionally only those with `status`.
 */
export interface PetQuery {
  readonly limit: number
  readonly status?: PetStatus | undefined
  readonly after?: PetId | undefined
}
