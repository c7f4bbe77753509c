import { Clock, DateTime, Effect, Result } from "effect"
import { OrderNotFound, PetNotFound } from "../../../domain/Errors.ts"
import { orderData } from "../../../domain/events/EventData.ts"
import { ORDER_EVENT_TYPE } from "../../../domain/events/EventType.ts"
import type { OrderTransitionEvent } from "../../../domain/orders/OrderEvent.ts"
import type { OrderId } from "../../../domain/orders/OrderId.ts"
import type { OrderQuery } from "../../../domain/orders/OrderQuery.ts"
import { decide, decidePlace } from "../../../domain/orders/OrderTransitions.ts"
import type { PetId } from "../../../domain/pets/PetId.ts"
import { OrderRepository } from "../../../ports/orders/OrderRepository.ts"
import type { EventTable } from "../events/EventTable.ts"
import type { OrderTable } from "./OrderTable.ts"
import type { PetTable } from "../pets/PetTable.ts"
import * as Spans from "../../observability/Spans.ts"
import * as TraceParent from "../../observability/TraceParent.ts"

/**
 * An OrderRepository over `orders` and the `pets` they are for, which a PetRepository
 * shares (see StoreMemory), that records each change in `events`. In `place` and `transition`, everything from reading the
 * pet or order to writing both is plain synchronous code with no effect in between, so
 * no other fiber can run there: an order and its pet always change together. The time
 * is read inside that step too, so `updatedAt` follows the order of the changes.
 */
export const fromTables = (pets: PetTable, orders: OrderTable, events: EventTable): OrderRepository["Service"] => {
  const place = Spans.method("OrderRepository.place", Effect.fnUntraced(function*(petId: PetId) {
    const fiber = yield* Effect.fiber
    const pet = pets.get(petId)
    if (pet === undefined) return yield* new PetNotFound({ id: petId })
    const decision = decidePlace(petId, pet.status)
    if (Result.isFailure(decision)) return yield* decision.failure
    pets.setStatus(petId, decision.success.pet)
    const now = DateTime.makeUnsafe(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
    const order = orders.insert(petId, decision.success.order, now)
    events.append(ORDER_EVENT_TYPE.place, orderData(order), now, TraceParent.current(fiber))
    return order
  }))

  const get = Spans.method("OrderRepository.get", (id: OrderId) => {
    const order = orders.get(id)
    return order === undefined ? Effect.fail(new OrderNotFound({ id })) : Effect.succeed(order)
  })

  const list = Spans.method("OrderRepository.list", (query: OrderQuery) => Effect.sync(() => orders.page(query)))

  const transition = Spans.method("OrderRepository.transition", Effect.fnUntraced(function*(id: OrderId, event: OrderTransitionEvent) {
    const fiber = yield* Effect.fiber
    const order = orders.get(id)
    if (order === undefined) return yield* new OrderNotFound({ id })
    const decision = decide(id, order.status, event)
    if (Result.isFailure(decision)) return yield* decision.failure
    pets.setStatus(order.petId, decision.success.pet)
    const now = DateTime.makeUnsafe(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
    const updated = orders.setStatus(id, decision.success.order, now)
    events.append(ORDER_EVENT_TYPE[event], orderData(updated), now, TraceParent.current(fiber))
    return updated
  }))

  return OrderRepository.of({ place, get, list, transition })
}
