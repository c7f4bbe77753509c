/**
 * The order state machine, as one table: what each event does to an order and to its
 * pet. Every adapter applies it through {@link decide}; none has rules of its own.
 */
import { Result } from "effect"
import { OrderConflict, PetNotAvailable } from "../Errors.ts"
import type { PetId } from "../pets/PetId.ts"
import type { PetStatus } from "../pets/PetStatus.ts"
import type { OrderEvent } from "./OrderEvent.ts"
import type { OrderId } from "./OrderId.ts"
import type { OrderStatus } from "./OrderStatus.ts"

/** One row: from `from` (null: no order yet), `event` leads to `order` for the order and `pet` for its pet. */
export interface OrderTransition {
  readonly event: OrderEvent
  readonly from: OrderStatus | null
  readonly order: OrderStatus
  readonly pet: PetStatus
}

/**
 * | order            | event   | order after | pet after |
 * |------------------|---------|-------------|-----------|
 * | (none)           | place   | placed      | pending   |  (the pet must be available)
 * | placed           | approve | approved    | pending   |
 * | approved         | deliver | delivered   | sold      |
 * | placed, approved | cancel  | cancelled   | available |
 *
 * Anything else is refused and changes nothing.
 */
export const ORDER_TRANSITIONS: ReadonlyArray<OrderTransition> = [
  { event: "place", from: null, order: "placed", pet: "pending" },
  { event: "approve", from: "placed", order: "approved", pet: "pending" },
  { event: "deliver", from: "approved", order: "delivered", pet: "sold" },
  { event: "cancel", from: "placed", order: "cancelled", pet: "available" },
  { event: "cancel", from: "approved", order: "cancelled", pet: "available" }
]

/** The only pet status an order can be placed for. */
export const ORDERABLE_PET_STATUS: PetStatus = "available"

/** What placing an order for a pet in `petStatus` does, or why it is refused. */
export const decidePlace = (
  petId: PetId,
  petStatus: PetStatus | undefined
): Result.Result<OrderTransition, PetNotAvailable> =>
  petStatus === ORDERABLE_PET_STATUS
    ? Result.succeed(ORDER_TRANSITIONS[0]!)
    : Result.fail(new PetNotAvailable({ petId, status: petStatus }))

/** What `event` does to order `orderId` in `status`, or why it is refused. */
export const decide = (
  orderId: OrderId,
  status: OrderStatus,
  event: Exclude<OrderEvent, "place">
): Result.Result<OrderTransition, OrderConflict> => {
  const row = ORDER_TRANSITIONS.find((transition) => transition.event === event && transition.from === status)
  return row === undefined ? Result.fail(new OrderConflict({ orderId, status, event })) : Result.succeed(row)
}
