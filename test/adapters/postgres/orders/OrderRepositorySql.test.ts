import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, type Redacted, Result } from "effect"
import * as OrderRepositorySql from "../../../../src/adapters/postgres/orders/OrderRepositorySql.ts"
import * as PetRepositorySql from "../../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as PostgresClient from "../../../../src/adapters/postgres/PostgresClient.ts"
import { CategoryId } from "../../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../../src/domain/pets/PetName.ts"
import { OrderRepository } from "../../../../src/ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../../src/ports/pets/PetRepository.ts"
import { orderRepositoryContract } from "../../../ports/orders/OrderRepositoryContract.ts"
import { freshDatabaseUrl, layerFreshDatabase, postgresAvailable } from "../TestDatabase.ts"

const options = { timeout: "10 seconds" } as const

const store = Layer.mergeAll(PetRepositorySql.layer(options), OrderRepositorySql.layer(options))

// One service instance: its own connection pool and repositories.
const instance = (url: Redacted.Redacted) =>
  Effect.map(
    Layer.build(store.pipe(Layer.provide(PostgresClient.layer({ url, poolSize: 5, statementTimeout: Duration.seconds(10) })))),
    (context) => ({ pets: Context.get(context, PetRepository), orders: Context.get(context, OrderRepository) })
  )

const available = new NewPet({ name: PetName.make("Rex"), categoryId: CategoryId.make(1n), status: "available" })

describe.skipIf(!postgresAvailable)("PostgreSQL server", () => {
  orderRepositoryContract("postgres", store.pipe(Layer.provide(layerFreshDatabase())), { runs: 30 })

  it.effect("two instances on one database: one order per pet, one winner per order", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabaseUrl
      // Started together, as a rolling deploy would: both migrate the fresh database.
      const [a, b] = yield* Effect.all([instance(url), instance(url)], { concurrency: 2 })

      const pet = yield* a.pets.create(available)
      const outcomes = yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i) => i % 2 === 0 ? a : b),
        (side) => Effect.result(side.orders.place(pet.id)),
        { concurrency: "unbounded" }
      )
      const placed = outcomes.filter(Result.isSuccess)
      assert.strictEqual(placed.length, 1)
      assert.deepStrictEqual(
        outcomes.filter(Result.isFailure).map((outcome) => [outcome.failure._tag, outcome.failure.message]),
        Array.from({ length: 49 }, () => ["PetNotAvailable", `pet ${pet.id} is pending; only an available pet can be ordered`])
      )
      assert.strictEqual((yield* b.pets.get(pet.id)).status, "pending")

      const approved = yield* Effect.forEach(Array.from({ length: 10 }), () =>
        Effect.gen(function*() {
          const order = yield* b.orders.place((yield* a.pets.create(available)).id)
          return yield* a.orders.transition(order.id, "approve")
        }))
      const races = yield* Effect.forEach(
        approved,
        (order) =>
          Effect.all([
            Effect.result(a.orders.transition(order.id, "cancel")),
            Effect.result(b.orders.transition(order.id, "deliver"))
          ], { concurrency: "unbounded" }),
        { concurrency: "unbounded" }
      )
      for (const [i, outcomes] of races.entries()) {
        const won = outcomes.filter(Result.isSuccess).map((outcome) => outcome.success)
        assert.strictEqual(won.length, 1)
        const winner = won[0]!
        assert.deepStrictEqual(yield* b.orders.get(winner.id), winner)
        assert.strictEqual(
          (yield* a.pets.get(approved[i]!.petId)).status,
          winner.status === "delivered" ? "sold" : "available"
        )
      }
    }), 60_000)
})
