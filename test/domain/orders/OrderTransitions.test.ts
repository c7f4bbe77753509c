import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { OrderConflict, PetNotAvailable } from "../../../src/domain/Errors.ts"
import { OrderEvent } from "../../../src/domain/orders/OrderEvent.ts"
import { OrderId } from "../../../src/domain/orders/OrderId.ts"
import { isOpen, OrderStatus } from "../../../src/domain/orders/OrderStatus.ts"
import { decide, decidePlace, ORDER_TRANSITIONS } from "../../../src/domain/orders/OrderTransitions.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetStatus } from "../../../src/domain/pets/PetStatus.ts"

const PETS = 4

// A random history: each step names an event and which pet (place) or order (the rest) it is for.
const Step = Schema.Struct({
  event: OrderEvent,
  target: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 7 }))
})
const History = Schema.Struct({
  initial: Schema.Array(Schema.UndefinedOr(PetStatus)).check(Schema.isBetweenLength(PETS, PETS)),
  steps: Schema.Array(Step).check(Schema.isMaxLength(40))
})

interface ModelOrder {
  readonly petId: number
  status: OrderStatus
}

/** Applies a history through the domain's decisions only, checking the invariants after every step. */
const run = (history: typeof History.Type) => {
  const pets: Array<PetStatus | undefined> = [...history.initial]
  const orders: Array<ModelOrder> = []
  const reached = new Set<OrderStatus>()
  for (const { event, target } of history.steps) {
    const petsBefore = [...pets]
    const ordersBefore = orders.map((order) => order.status)
    if (event === "place") {
      const petId = target % PETS
      const decision = decidePlace(PetId.make(BigInt(petId + 1)), pets[petId])
      if (Result.isSuccess(decision)) {
        assert.strictEqual(petsBefore[petId], "available")
        orders.push({ petId, status: decision.success.order })
        pets[petId] = decision.success.pet
      } else {
        assert.instanceOf(decision.failure, PetNotAvailable)
        assert.notStrictEqual(pets[petId], "available")
      }
    } else if (orders.length > 0) {
      const order = orders[target % orders.length]!
      const decision = decide(OrderId.make(BigInt(target % orders.length + 1)), order.status, event)
      if (Result.isSuccess(decision)) {
        assert.strictEqual(decision.success.from, order.status)
        order.status = decision.success.order
        pets[order.petId] = decision.success.pet
      } else {
        assert.instanceOf(decision.failure, OrderConflict)
        // A refusal changes nothing and says where the order stands.
        assert.deepStrictEqual(pets, petsBefore)
        assert.deepStrictEqual(orders.map((o) => o.status), ordersBefore)
        assert.include(decision.failure.message, `is ${order.status}`)
      }
    }
    for (const order of orders) reached.add(order.status)
    for (let petId = 0; petId < PETS; petId++) {
      const mine = orders.filter((order) => order.petId === petId)
      const open = mine.filter((order) => isOpen(order.status))
      const delivered = mine.filter((order) => order.status === "delivered")
      assert.isAtMost(open.length, 1, `pet ${petId} has more than one open order`)
      if (open.length === 1) assert.strictEqual(pets[petId], "pending")
      if (mine.length > 0) {
        // Once ordered, a pet's status is exactly what its orders say.
        assert.strictEqual(pets[petId] === "pending", open.length === 1)
        assert.strictEqual(pets[petId] === "sold", delivered.length === 1)
        assert.isAtMost(delivered.length, 1)
        if (pets[petId] === "available") assert.strictEqual(open.length + delivered.length, 0)
      }
    }
  }
  const table = new Set(ORDER_TRANSITIONS.map((row) => row.order))
  for (const status of reached) assert.isTrue(table.has(status), `${status} is outside the table`)
}

describe("order transitions", () => {
  it.prop("random histories keep pets and orders consistent", [History], ([history]) => run(history), {
    arbitrary: { runs: 500 }
  })

  it("every (status, event) pair outside the table is refused, naming the current state", () => {
    for (const status of OrderStatus.literals) {
      for (const event of ["approve", "deliver", "cancel"] as const) {
        const row = ORDER_TRANSITIONS.find((r) => r.from === status && r.event === event)
        const decision = decide(OrderId.make(7n), status, event)
        if (row === undefined) {
          assert.isTrue(Result.isFailure(decision), `${status} + ${event}`)
          if (Result.isFailure(decision)) assert.strictEqual(decision.failure.message, `order 7 is ${status}; it cannot be ${event === "approve" ? "approved" : event === "deliver" ? "delivered" : "cancelled"}`)
        } else {
          assert.deepStrictEqual(decision, Result.succeed(row))
        }
      }
    }
  })

  it("an order can be placed only for an available pet", () => {
    assert.deepStrictEqual(decidePlace(PetId.make(1n), "available"), Result.succeed(ORDER_TRANSITIONS[0]!))
    for (const status of ["pending", "sold", undefined] as const) {
      const decision = decidePlace(PetId.make(3n), status)
      assert.isTrue(Result.isFailure(decision))
      if (Result.isFailure(decision)) {
        assert.strictEqual(decision.failure.message, `pet 3 is ${status ?? "without a status"}; only an available pet can be ordered`)
      }
    }
  })
})
