import { Clock, DateTime, Effect, type Fiber, Result } from "effect"
import { OrderNotFound, PetNotFound } from "../../../domain/Errors.ts"
import { orderData, petUpdatedData } from "../../../domain/events/EventData.ts"
import { ORDER_EVENT_TYPE, type EventType } from "../../../domain/events/EventType.ts"
import type { OrderTransitionEvent } from "../../../domain/orders/OrderEvent.ts"
import type { Order } from "../../../domain/orders/Order.ts"
import type { OrderId } from "../../../domain/orders/OrderId.ts"
import type { OrderQuery } from "../../../domain/orders/OrderQuery.ts"
import { decide, decidePlace } from "../../../domain/orders/OrderTransitions.ts"
import type { Pet } from "../../../domain/pets/Pet.ts"
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
 * pet or order to writing both and recording their events is plain synchronous code with no effect in between, so
 * no other fiber can run there: an order and its pet always change together. The time
 * is read inside that step too, so `updatedAt` follows the order of the changes.
 */
export const fromTables = (pets: PetTable, orders: OrderTable, events: EventTable): OrderRepository["Service"] => {
  // The order's event, then pet.updated when the change moved the pet's status (approve
  // leaves it pending and records only its own), as the SQL stores record them.
  const record = (fiber: Fiber.Fiber<unknown, unknown>, type: EventType, order: Order, before: Pet, after: Pet, now: DateTime.Utc) => {
    const traceParent = TraceParent.current(fiber)
    events.append(type, orderData(order), now, traceParent)
    if (after.status !== before.status) events.append("pet.updated", petUpdatedData(before, after), now, traceParent)
  }

  const place = Spans.method("OrderRepository.place", Effect.fnUntraced(function*(petId: PetId) {
    const fiber = yield* Effect.fiber
    const pet = pets.get(petId)
    if (pet === undefined) return yield* new PetNotFound({ id: petId })
    const decision = decidePlace(petId, pet.status)
    if (Result.isFailure(decision)) return yield* decision.failure
    const after = pets.setStatus(petId, decision.success.pet)
    const now = DateTime.makeUnsafe(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
    const order = orders.insert(petId, decision.success.order, now)
    record(fiber, ORDER_EVENT_TYPE.place, order, pet, after, now)
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
    // An open order's pet is never retired (a retirement is refused while one is open).
    const before = pets.get(order.petId)
    if (before === undefined) throw new Error(`order ${id}'s pet ${order.petId} is gone`)
    // An approval leaves the pet pending: no change of it, so no new version.
    const after = decision.success.pet === before.status ? before : pets.setStatus(order.petId, decision.success.pet)
    const now = DateTime.makeUnsafe(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
    const updated = orders.setStatus(id, decision.success.order, now)
    record(fiber, ORDER_EVENT_TYPE[event], updated, before, after, now)
    return updated
  }))

  return OrderRepository.of({ place, get, list, transition })
}
