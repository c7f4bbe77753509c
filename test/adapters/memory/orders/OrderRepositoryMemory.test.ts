import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect } from "effect"
import { TestClock } from "effect/testing"
import * as StoreMemory from "../../../../src/adapters/memory/StoreMemory.ts"
import { CategoryId } from "../../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../../src/domain/pets/PetName.ts"
import { OrderRepository } from "../../../../src/ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../../src/ports/pets/PetRepository.ts"
import { orderRepositoryContract } from "../../../ports/orders/OrderRepositoryContract.ts"

orderRepositoryContract("memory", StoreMemory.layer, { runs: 100 })

describe("OrderRepository in memory", () => {
  it.effect("takes createdAt and updatedAt from the Clock", () =>
    Effect.gen(function*() {
      const pets = yield* PetRepository
      const orders = yield* OrderRepository
      const start = Date.parse("2030-01-01T00:00:00Z")
      yield* TestClock.setTime(start)
      const pet = yield* pets.create(
        new NewPet({ name: PetName.make("Rex"), categoryId: CategoryId.make(1n), status: "available" })
      )
      const placed = yield* orders.place(pet.id)
      assert.strictEqual(DateTime.toEpochMillis(placed.createdAt), start)
      assert.strictEqual(DateTime.toEpochMillis(placed.updatedAt), start)
      yield* TestClock.adjust("1 minute")
      const approved = yield* orders.transition(placed.id, "approve")
      assert.strictEqual(DateTime.toEpochMillis(approved.createdAt), start)
      assert.strictEqual(DateTime.toEpochMillis(approved.updatedAt), start + 60_000)
      // A refusal is no change: the time stays that of the last one.
      yield* TestClock.adjust("1 minute")
      yield* Effect.flip(orders.transition(placed.id, "approve"))
      assert.strictEqual(DateTime.toEpochMillis((yield* orders.get(placed.id)).updatedAt), start + 60_000)
    }).pipe(Effect.provide(StoreMemory.layer)))
})
