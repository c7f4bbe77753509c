import { assert, layer } from "@effect/vitest"
import { DateTime, Effect, type Layer, Result, Schema } from "effect"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { OrderConflict, PetHasOpenOrder, PetNotAvailable } from "../../../src/domain/Errors.ts"
import { INT64_MAX } from "../../../src/domain/Int64.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import type { Order } from "../../../src/domain/orders/Order.ts"
import { OrderEvent, type OrderTransitionEvent } from "../../../src/domain/orders/OrderEvent.ts"
import { OrderId } from "../../../src/domain/orders/OrderId.ts"
import { isOpen, OrderStatus } from "../../../src/domain/orders/OrderStatus.ts"
import { decide, decidePlace, ORDER_TRANSITIONS, ORDERABLE_PET_STATUS } from "../../../src/domain/orders/OrderTransitions.ts"
import type { Pet } from "../../../src/domain/pets/Pet.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import type { PetInventory } from "../../../src/domain/pets/PetInventory.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { PetPatch } from "../../../src/domain/pets/PetPatch.ts"
import { PetStatus } from "../../../src/domain/pets/PetStatus.ts"
import { OrderRepository } from "../../../src/ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import { type ContractOptions, inventoryByListing } from "../pets/PetRepositoryContract.ts"

const TRANSITION_EVENTS: ReadonlyArray<OrderTransitionEvent> = ["approve", "deliver", "cancel"]

// The events that take a new order to `status`, found by walking the table from `place`:
// the suite reaches every state through the store, with no rules of its own.
const pathTo = (status: OrderStatus): ReadonlyArray<OrderTransitionEvent> => {
  const placed = ORDER_TRANSITIONS.find((row) => row.event === "place")!.order
  const queue: Array<readonly [OrderStatus, ReadonlyArray<OrderTransitionEvent>]> = [[placed, []]]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const [at, path] = next
    if (at === status) return path
    for (const row of ORDER_TRANSITIONS) {
      if (row.from === at && row.event !== "place") queue.push([row.order, [...path, row.event]])
    }
  }
  throw new Error(`the table never reaches ${status}`)
}

const newPet = (status: PetStatus | undefined) =>
  Effect.flatMap(PetRepository, (pets) =>
    pets.create(
      new NewPet(
        status === undefined
          ? { name: PetName.make("ordered"), categoryId: CategoryId.make(1n) }
          : { name: PetName.make("ordered"), categoryId: CategoryId.make(1n), status }
      )
    ))

// A fresh available pet with an order taken to `status` through the store.
const orderIn = (status: OrderStatus) =>
  Effect.gen(function*() {
    const orders = yield* OrderRepository
    const pet = yield* newPet(ORDERABLE_PET_STATUS)
    let order = yield* orders.place(pet.id)
    for (const event of pathTo(status)) order = yield* orders.transition(order.id, event)
    assert.strictEqual(order.status, status)
    return order
  })

const petStatus = (id: PetId) => Effect.map(Effect.flatMap(PetRepository, (pets) => pets.get(id)), (pet) => pet.status)

// The highest order id so far: the suite is the store's only writer and ids only grow,
// so `after` scopes a list to the orders a property run makes.
const orderHighWater = Effect.gen(function*() {
  const orders = yield* OrderRepository
  const probe = yield* orders.place((yield* newPet(ORDERABLE_PET_STATUS)).id)
  return probe.id
})

const petHighWater = Effect.map(newPet(undefined), (pet) => pet.id)

interface OrderFilter {
  readonly status: OrderStatus | undefined
  readonly petId: PetId | undefined
}

const pageThrough = (filter: OrderFilter, pageSize: number, after: OrderId) =>
  Effect.gen(function*() {
    const orders = yield* OrderRepository
    const seen: Array<Order> = []
    let cursor = after
    for (;;) {
      const page = yield* orders.list({ limit: pageSize, ...filter, after: cursor })
      assert.isAtMost(page.length, pageSize)
      seen.push(...page)
      if (page.length < pageSize) return seen
      cursor = page[page.length - 1]!.id
    }
  })

const matches = (filter: OrderFilter) => (order: Order) =>
  (filter.status === undefined || order.status === filter.status) &&
  (filter.petId === undefined || order.petId === filter.petId)

const isAscending = (ids: ReadonlyArray<bigint>) => ids.every((id, i) => i === 0 || ids[i - 1]! < id)

const counts = (statuses: ReadonlyArray<PetStatus | undefined>): PetInventory => ({
  available: statuses.filter((status) => status === "available").length,
  pending: statuses.filter((status) => status === "pending").length,
  sold: statuses.filter((status) => status === "sold").length,
  none: statuses.filter((status) => status === undefined).length
})

const difference = (after: PetInventory, before: PetInventory): PetInventory => ({
  available: after.available - before.available,
  pending: after.pending - before.pending,
  sold: after.sold - before.sold,
  none: after.none - before.none
})

const PETS = 3

// A random history on a few fresh pets: their initial statuses (mostly orderable), then
// events, each naming which pet (place) or which of the run's orders (the rest) it is for.
const History = Schema.Struct({
  initial: Schema.Array(Schema.Struct({ orderable: Schema.Boolean, otherwise: Schema.UndefinedOr(PetStatus) }))
    .check(Schema.isBetweenLength(PETS, PETS)),
  steps: Schema.Array(Schema.Struct({
    event: OrderEvent,
    target: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 11 }))
  })).check(Schema.isMaxLength(20))
})

const PageRequest = Schema.Struct({
  limit: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })),
  status: Schema.UndefinedOr(OrderStatus),
  pet: Schema.UndefinedOr(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: PETS - 1 })))
})

/**
 * Applies a history through the store, checking each step's outcome against the
 * domain's table applied to what the store held just before. Returns the run's pets
 * (with their initial statuses) and orders, as the store now has them.
 */
const runHistory = (history: typeof History.Type) =>
  Effect.gen(function*() {
    const pets = yield* PetRepository
    const orders = yield* OrderRepository
    const initial = history.initial.map(({ orderable, otherwise }) => orderable ? ORDERABLE_PET_STATUS : otherwise)
    const created = yield* Effect.forEach(initial, newPet)
    const orderIds: Array<OrderId> = []
    for (const { event, target } of history.steps) {
      if (event === "place") {
        const pet = yield* pets.get(created[target % PETS]!.id)
        const expected = decidePlace(pet.id, pet.status)
        const outcome = yield* Effect.result(orders.place(pet.id))
        if (Result.isSuccess(expected)) {
          assert.isTrue(Result.isSuccess(outcome), `place for pet ${pet.id} (${pet.status}) was refused`)
          if (Result.isSuccess(outcome)) {
            assert.strictEqual(outcome.success.status, expected.success.order)
            assert.strictEqual(outcome.success.petId, pet.id)
            orderIds.push(outcome.success.id)
          }
          assert.strictEqual(yield* petStatus(pet.id), expected.success.pet)
        } else {
          assert.isTrue(Result.isFailure(outcome), `place for pet ${pet.id} (${pet.status}) succeeded`)
          if (Result.isFailure(outcome)) assert.strictEqual(outcome.failure.message, expected.failure.message)
          assert.deepStrictEqual(yield* pets.get(pet.id), pet)
        }
      } else if (orderIds.length > 0) {
        const order = yield* orders.get(orderIds[target % orderIds.length]!)
        const petBefore = yield* pets.get(order.petId)
        const expected = decide(order.id, order.status, event)
        const outcome = yield* Effect.result(orders.transition(order.id, event))
        if (Result.isSuccess(expected)) {
          assert.isTrue(Result.isSuccess(outcome), `${event} on a ${order.status} order was refused`)
          if (Result.isSuccess(outcome)) assert.strictEqual(outcome.success.status, expected.success.order)
          assert.strictEqual(yield* petStatus(order.petId), expected.success.pet)
        } else {
          assert.isTrue(Result.isFailure(outcome), `${event} on a ${order.status} order succeeded`)
          if (Result.isFailure(outcome)) assert.strictEqual(outcome.failure.message, expected.failure.message)
          assert.deepStrictEqual(yield* orders.get(order.id), order)
          assert.deepStrictEqual(yield* pets.get(order.petId), petBefore)
        }
      }
    }
    return {
      initial,
      pets: yield* Effect.forEach(created, (pet) => pets.get(pet.id)),
      orders: yield* Effect.forEach(orderIds, orders.get)
    }
  })

/**
 * The behaviour every OrderRepository adapter must have, together with the
 * PetRepository over the same store. Registered once per adapter with a layer that
 * yields a fresh, empty store providing both ports.
 */
export const orderRepositoryContract = (
  name: string,
  store: Layer.Layer<PetRepository | OrderRepository, unknown>,
  options: ContractOptions
) =>
  layer(store, { timeout: options.timeout ?? 60_000 })(`OrderRepository contract: ${name}`, (it) => {
    const arbitrary = { runs: options.runs }
    const timeout = options.timeout ?? 60_000

    it.effect("assigns order ids starting at 1 and increasing", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        const first = yield* orders.place((yield* newPet("available")).id)
        const second = yield* orders.place((yield* newPet("available")).id)
        assert.strictEqual(first.id, 1n)
        assert.strictEqual(second.id, 2n)
      }))

    it.effect("place makes a placed order for one pet, which becomes pending", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        const pets = yield* PetRepository
        const pet = yield* newPet("available")
        const order = yield* orders.place(pet.id)
        assert.strictEqual(order.petId, pet.id)
        assert.strictEqual(order.quantity, 1)
        assert.strictEqual(order.status, "placed")
        assert.isFalse(order.complete)
        assert.isTrue(DateTime.Equivalence(order.createdAt, order.updatedAt))
        assert.deepStrictEqual(yield* orders.get(order.id), order)
        assert.strictEqual(yield* petStatus(pet.id), "pending")
        const pending = yield* pets.list({ limit: 1, status: "pending", after: PetId.make(pet.id - 1n) })
        assert.deepStrictEqual(pending.map((p) => p.id), [pet.id])
        assert.deepStrictEqual(yield* pets.list({ limit: 1, status: "available", after: PetId.make(pet.id - 1n) }), [])
      }))

    it.effect("every row of the transition table moves the order and its pet as the row says", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        for (const row of ORDER_TRANSITIONS) {
          if (row.event === "place" || row.from === null) continue
          const before = yield* orderIn(row.from)
          const after = yield* orders.transition(before.id, row.event)
          const context = `${row.from} + ${row.event}`
          assert.strictEqual(after.status, row.order, context)
          assert.strictEqual(after.complete, row.order === "delivered", context)
          assert.strictEqual(after.petId, before.petId, context)
          assert.isTrue(DateTime.Equivalence(after.createdAt, before.createdAt), context)
          assert.isTrue(DateTime.isGreaterThanOrEqualTo(after.updatedAt, before.updatedAt), context)
          assert.deepStrictEqual(yield* orders.get(before.id), after, context)
          assert.strictEqual(yield* petStatus(before.petId), row.pet, context)
        }
      }), timeout)

    it.effect("every event the table has no row for is refused, naming the current state, and changes nothing", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        const pets = yield* PetRepository
        for (const status of OrderStatus.literals) {
          for (const event of TRANSITION_EVENTS) {
            if (ORDER_TRANSITIONS.some((row) => row.from === status && row.event === event)) continue
            const order = yield* orderIn(status)
            const pet = yield* pets.get(order.petId)
            const error = yield* Effect.flip(orders.transition(order.id, event))
            assert.instanceOf(error, OrderConflict, `${status} + ${event}`)
            assert.strictEqual(error.message, new OrderConflict({ orderId: order.id, status, event }).message)
            assert.include(error.message, `order ${order.id} is ${status};`)
            assert.deepStrictEqual(yield* orders.get(order.id), order)
            assert.deepStrictEqual(yield* pets.get(order.petId), pet)
          }
        }
      }), timeout)

    it.effect("get and transition of an order id that was never assigned fail with OrderNotFound", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        for (const id of [0n, -1n, INT64_MAX].map((id) => OrderId.make(id))) {
          const missing = yield* Effect.flip(orders.get(id))
          assert.strictEqual(missing._tag, "OrderNotFound")
          assert.strictEqual(missing.message, `order ${id} not found`)
          for (const event of TRANSITION_EVENTS) {
            assert.strictEqual((yield* Effect.flip(orders.transition(id, event)))._tag, "OrderNotFound")
          }
        }
      }))

    it.effect("placing for a pet that does not exist is PetNotFound, and stores nothing", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        const after = yield* orderHighWater
        for (const id of [0n, -1n, INT64_MAX].map((id) => PetId.make(id))) {
          const error = yield* Effect.flip(orders.place(id))
          assert.strictEqual(error._tag, "PetNotFound")
          assert.strictEqual(error.message, `pet ${id} not found`)
        }
        assert.deepStrictEqual(yield* orders.list({ limit: 10, after }), [])
      }))

    it.effect("placing for a pending, sold or status-less pet is PetNotAvailable naming its status, and changes nothing", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        const pets = yield* PetRepository
        for (const status of ["pending", "sold", undefined] as const) {
          const pet = yield* newPet(status)
          const error = yield* Effect.flip(orders.place(pet.id))
          assert.instanceOf(error, PetNotAvailable)
          assert.strictEqual(error.status, status)
          assert.strictEqual(
            error.message,
            `pet ${pet.id} is ${status ?? "without a status"}; only an available pet can be ordered`
          )
          assert.deepStrictEqual(yield* pets.get(pet.id), pet)
          assert.deepStrictEqual(yield* orders.list({ limit: 10, petId: pet.id }), [])
        }
      }))

    it.effect("an ordered pet can be ordered again only once its order is cancelled", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        const pet = yield* newPet("available")
        const first = yield* orders.place(pet.id)
        assert.strictEqual((yield* Effect.flip(orders.place(pet.id)))._tag, "PetNotAvailable")
        yield* orders.transition(first.id, "cancel")
        const second = yield* orders.place(pet.id)
        yield* orders.transition(second.id, "approve")
        yield* orders.transition(second.id, "deliver")
        const sold = yield* Effect.flip(orders.place(pet.id))
        assert.instanceOf(sold, PetNotAvailable)
        assert.strictEqual(sold.status, "sold")
        const mine = yield* orders.list({ limit: 10, petId: pet.id })
        assert.deepStrictEqual(mine.map((order) => [order.id, order.status]), [[first.id, "cancelled"], [second.id, "delivered"]])
      }))

    it.effect("inventory counts pets by status and without one, following orders", () =>
      Effect.gen(function*() {
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const before = yield* pets.inventory
        for (const status of ["available", "available", "pending", "sold", undefined] as const) yield* newPet(status)
        assert.deepStrictEqual(difference(yield* pets.inventory, before), { available: 2, pending: 1, sold: 1, none: 1 })
        const order = yield* orders.place((yield* newPet("available")).id)
        assert.deepStrictEqual(difference(yield* pets.inventory, before), { available: 2, pending: 2, sold: 1, none: 1 })
        yield* orders.transition(order.id, "approve")
        yield* orders.transition(order.id, "deliver")
        assert.deepStrictEqual(difference(yield* pets.inventory, before), { available: 2, pending: 1, sold: 2, none: 1 })
      }))

    it.effect.prop(
      "list and keyset paging respect limit, status, pet and ascending id order",
      [History, PageRequest],
      ([history, request]) =>
        Effect.gen(function*() {
          const orders = yield* OrderRepository
          const after = yield* orderHighWater
          const run = yield* runHistory(history)
          const filter: OrderFilter = {
            status: request.status,
            petId: request.pet === undefined ? undefined : run.pets[request.pet]!.id
          }
          const expected = run.orders.filter(matches(filter))
          assert.deepStrictEqual(yield* orders.list({ limit: request.limit, ...filter, after }), expected.slice(0, request.limit))
          assert.deepStrictEqual(yield* pageThrough(filter, request.limit, after), expected)
        }),
      { timeout, arbitrary }
    )

    it.effect.prop(
      "random histories keep every pet's status what its orders say, in the pet indexes and the inventory too",
      [History],
      ([history]) =>
        Effect.gen(function*() {
          const pets = yield* PetRepository
          const orders = yield* OrderRepository
          const inventoryBefore = yield* pets.inventory
          const after = yield* petHighWater
          const run = yield* runHistory(history)
          for (const [i, pet] of run.pets.entries()) {
            const mine = yield* orders.list({ limit: 100, petId: pet.id })
            assert.deepStrictEqual(mine, run.orders.filter((order) => order.petId === pet.id))
            const open = mine.filter((order) => isOpen(order.status))
            const delivered = mine.filter((order) => order.status === "delivered")
            assert.isAtMost(open.length, 1, `pet ${pet.id} has more than one open order`)
            assert.isAtMost(delivered.length, 1, `pet ${pet.id} was delivered twice`)
            if (mine.length === 0) {
              assert.strictEqual(pet.status, run.initial[i])
            } else {
              assert.strictEqual(pet.status === "pending", open.length === 1, `pet ${pet.id}`)
              assert.strictEqual(pet.status === "sold", delivered.length === 1, `pet ${pet.id}`)
              assert.strictEqual(pet.status === "available", open.length + delivered.length === 0, `pet ${pet.id}`)
            }
          }
          // The run's pets are the only ones after the high-water mark; each status index
          // lists exactly those now in that status, in id order.
          for (const status of PetStatus.literals) {
            const listed = yield* pets.list({ limit: 100, status, after })
            assert.deepStrictEqual(listed, run.pets.filter((pet: Pet) => pet.status === status), status)
            assert.isTrue(isAscending(listed.map((pet) => pet.id)), status)
          }
          assert.deepStrictEqual(yield* pets.list({ limit: 100, after }), run.pets)
          const inventoryAfter = yield* pets.inventory
          // The high-water probe is a pet without a status.
          assert.deepStrictEqual(
            difference(inventoryAfter, inventoryBefore),
            counts([undefined, ...run.pets.map((pet) => pet.status)])
          )
        }),
      { timeout, arbitrary }
    )

    it.effect.prop(
      "the inventory equals the whole catalogue counted by status, after random creates and order histories",
      [History],
      ([history]) =>
        Effect.gen(function*() {
          const pets = yield* PetRepository
          yield* runHistory(history)
          assert.deepStrictEqual(yield* pets.inventory, yield* inventoryByListing)
        }),
      { timeout, arbitrary }
    )

    it.effect("while an order is open, a status patch or a delete is PetHasOpenOrder; other fields change; closed, both apply", () =>
      Effect.gen(function*() {
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        for (const open of OrderStatus.literals.filter(isOpen)) {
          const order = yield* orderIn(open)
          const pet = yield* pets.get(order.petId)
          for (const refused of [
            pets.update(pet.id, new PetPatch({ status: "pending" }), {}),
            pets.update(pet.id, new PetPatch({ name: PetName.make("renamed"), status: null }), {}),
            pets.delete(pet.id, {})
          ]) {
            assert.instanceOf(yield* Effect.flip(refused), PetHasOpenOrder)
          }
          assert.deepStrictEqual(yield* pets.get(pet.id), pet)
          const renamed = yield* pets.update(pet.id, new PetPatch({ name: PetName.make("renamed") }), {})
          assert.strictEqual(renamed.status, pet.status)
          yield* orders.transition(order.id, "cancel")
          assert.strictEqual((yield* pets.update(pet.id, new PetPatch({ status: "sold" }), {})).status, "sold")
          yield* pets.delete(pet.id, {})
        }
      }))

    it.effect("every order change of a pet's status is a new version of the pet; an approval, which changes none, is not", () =>
      Effect.gen(function*() {
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const pet = yield* newPet("available")
        const order = yield* orders.place(pet.id)
        const placed = yield* pets.get(pet.id)
        assert.isAbove(placed.version, pet.version)
        const stale = yield* Effect.flip(pets.update(pet.id, new PetPatch({ name: PetName.make("late") }), { ifMatch: [pet.version] }))
        assert.strictEqual(stale._tag, "PetChanged")
        yield* orders.transition(order.id, "approve")
        const approved = yield* pets.get(pet.id)
        assert.deepStrictEqual(approved, placed)
        // The version read before the approval still names the pet.
        const renamed = yield* pets.update(pet.id, new PetPatch({ name: PetName.make("renamed") }), { ifMatch: [placed.version] })
        yield* orders.transition(order.id, "deliver")
        const sold = yield* pets.get(pet.id)
        assert.strictEqual(sold.status, "sold")
        assert.isAbove(sold.version, renamed.version)
      }))

    it.effect("a deleted pet cannot be ordered (PetNotFound); its closed orders stay readable and listed", () =>
      Effect.gen(function*() {
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const delivered = yield* orderIn("delivered")
        const before = yield* pets.inventory
        yield* pets.delete(delivered.petId, {})
        assert.deepStrictEqual(yield* pets.inventory, { ...before, sold: before.sold - 1 })
        assert.strictEqual((yield* Effect.flip(orders.place(delivered.petId)))._tag, "PetNotFound")
        assert.deepStrictEqual(yield* orders.get(delivered.id), delivered)
        assert.deepStrictEqual(yield* orders.list({ limit: 10, petId: delivered.petId }), [delivered])
        assert.deepStrictEqual(yield* pets.inventory, yield* inventoryByListing)
      }))

    it.effect("50 concurrent places for one pet: exactly one order, 49 PetNotAvailable", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        const pet = yield* newPet("available")
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 50 }, () => pet.id),
          (id) => Effect.result(orders.place(id)),
          { concurrency: "unbounded" }
        )
        const placed = outcomes.filter(Result.isSuccess).map((outcome) => outcome.success)
        const refused = outcomes.filter(Result.isFailure).map((outcome) => outcome.failure)
        assert.strictEqual(placed.length, 1)
        assert.strictEqual(refused.length, 49)
        for (const error of refused) {
          assert.instanceOf(error, PetNotAvailable)
          assert.strictEqual(error.status, "pending")
        }
        assert.deepStrictEqual(yield* orders.list({ limit: 100, petId: pet.id }), placed)
        assert.strictEqual(yield* petStatus(pet.id), "pending")
      }), timeout)

    it.effect("concurrent cancel and deliver of one approved order: exactly one wins, and the pet follows it", () =>
      Effect.gen(function*() {
        const orders = yield* OrderRepository
        const approved = yield* Effect.forEach(Array.from({ length: 10 }), () => orderIn("approved"))
        const races = yield* Effect.forEach(
          approved,
          (order) =>
            Effect.all(
              [Effect.result(orders.transition(order.id, "cancel")), Effect.result(orders.transition(order.id, "deliver"))],
              { concurrency: "unbounded" }
            ),
          { concurrency: "unbounded" }
        )
        for (const [i, outcomes] of races.entries()) {
          const order = approved[i]!
          const won = outcomes.filter(Result.isSuccess).map((outcome) => outcome.success)
          const lost = outcomes.filter(Result.isFailure).map((outcome) => outcome.failure)
          assert.strictEqual(won.length, 1, `order ${order.id}`)
          assert.strictEqual(lost.length, 1, `order ${order.id}`)
          const winner = won[0]!
          assert.instanceOf(lost[0], OrderConflict)
          assert.include(lost[0]!.message, `is ${winner.status};`)
          assert.deepStrictEqual(yield* orders.get(order.id), winner)
          assert.strictEqual(yield* petStatus(order.petId), winner.status === "delivered" ? "sold" : "available")
        }
      }), timeout)
  })
