import { Context, type Effect } from "effect"
import type { OrderConflict, OrderNotFound, PetNotAvailable, PetNotFound, StoreUnavailable } from "../../domain/Errors.ts"
import type { Order } from "../../domain/orders/Order.ts"
import type { OrderTransitionEvent } from "../../domain/orders/OrderEvent.ts"
import type { OrderId } from "../../domain/orders/OrderId.ts"
import type { OrderQuery } from "../../domain/orders/OrderQuery.ts"
import type { PetId } from "../../domain/pets/PetId.ts"

/**
 * Where orders are kept, beside the pets they are for. A separate port from
 * PetRepository because a host may want the catalogue without the store area; every
 * adapter implements both over the same storage, since an order and its pet change
 * together. Each change applies the domain's transition table (`decide`,
 * `decidePlace`) to the order and its pet atomically: no interleaving of callers, on any
 * number of instances, can leave them disagreeing.
 */
export class OrderRepository extends Context.Service<OrderRepository, {
  /** Places an order for an available pet, which becomes pending; ids start at 1 and increase. */
  readonly place: (petId: PetId) => Effect.Effect<Order, PetNotFound | PetNotAvailable | StoreUnavailable>
  /** Reads one order by id. */
  readonly get: (id: OrderId) => Effect.Effect<Order, OrderNotFound | StoreUnavailable>
  /** Up to `limit` orders with id greater than `after`, optionally by status and pet, ascending by id. */
  readonly list: (query: OrderQuery) => Effect.Effect<ReadonlyArray<Order>, StoreUnavailable>
  /** Approves, delivers or cancels an order, moving its pet as the transition table says. */
  readonly transition: (
    id: OrderId,
    event: OrderTransitionEvent
  ) => Effect.Effect<Order, OrderNotFound | OrderConflict | StoreUnavailable>
}>()("animal-store/ports/OrderRepository") {}
