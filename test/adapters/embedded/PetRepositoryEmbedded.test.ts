import { assert, describe, it } from "@effect/vitest"
import { type Duration, Effect, Fiber, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { StoreUnavailable } from "../../../src/domain/Errors.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import { petRepositoryContract } from "../../ports/pets/PetRepositoryContract.ts"
import * as FreshDataDir from "./FreshDataDir.ts"

const freshDataDir = FreshDataDir.layer("animal-store-contract-")

petRepositoryContract(
  "embedded",
  PetRepositorySql.layer({ timeout: "10 seconds", sharedConnection: true }).pipe(Layer.provide(freshDataDir)),
  { runs: 30, timeout: 120_000 }
)

describe("PetRepositorySql on embedded, when PGlite is busy past the deadline", () => {
  // PGlite runs one statement at a time: a create queued behind a long one fails at the
  // deadline, and must not be stored when PGlite gets to it, or a client that retries
  // the 503 stores the pet twice.

  /** Creates a pet while PGlite sleeps `busySeconds`; its failure, and the pets stored once PGlite is free. */
  const createWhileBusy = (options: { readonly timeout: Duration.Input; readonly busySeconds: number }) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pets = yield* PetRepository
      const busy = yield* Effect.forkChild(sql`SELECT pg_sleep(${options.busySeconds})`)
      yield* Effect.sleep("100 millis")
      const failure = yield* Effect.flip(pets.create(new NewPet({ name: PetName.make("Ghost"), categoryId: CategoryId.make(1n) })))
      yield* Fiber.join(busy)
      // Statements run in order: once this one has, whatever was queued before it has too.
      const stored = yield* pets.list({ limit: 100 })
      return { failure, stored: stored.map((pet) => pet.name) }
    }).pipe(
      Effect.provide(Layer.provideMerge(
        PetRepositorySql.layer({ timeout: options.timeout, sharedConnection: true }),
        freshDataDir
      ))
    )

  it.live("a create answered StoreUnavailable is not stored later", () =>
    Effect.gen(function*() {
      const { failure, stored } = yield* createWhileBusy({ timeout: "300 millis", busySeconds: 1.5 })
      assert.deepStrictEqual(failure, new StoreUnavailable({ message: "the database did not answer within 300ms" }))
      assert.deepStrictEqual(stored, [])
    }), 30_000)

  it.live("a create the database reaches after three quarters of the deadline stores nothing and says so", () =>
    Effect.gen(function*() {
      // Reached about 3.4 s into a 4 s deadline: answered in time, but after the 3 s the insert allows
      // (0.4 s either side, so a slow machine does not turn it into the other case).
      const { failure, stored } = yield* createWhileBusy({ timeout: "4 seconds", busySeconds: 3.5 })
      assert.deepStrictEqual(failure, new StoreUnavailable({ message: "the database did not start the create within 3s" }))
      assert.deepStrictEqual(stored, [])
    }), 30_000)

  it.live("a create the database ran in time is answered as created, though a slow statement travels after it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pets = yield* PetRepository
      // While PGlite sleeps 0.3 s, the create's insert and then a 2 s sleep are sent: the two travel
      // to PGlite together. The insert runs at about 0.3 s, well within the 0.75 s it may start in;
      // its answer must not wait for the sleep after it, past the 1 s deadline.
      const first = yield* Effect.forkChild(sql`SELECT pg_sleep(0.3)`)
      yield* Effect.sleep("100 millis")
      const create = yield* Effect.forkChild(Effect.result(
        pets.create(new NewPet({ name: PetName.make("Ghost"), categoryId: CategoryId.make(1n) }))
      ))
      yield* Effect.sleep("50 millis")
      const after = yield* Effect.forkChild(sql`SELECT pg_sleep(2)`)
      const created = yield* Fiber.join(create)
      yield* Fiber.join(first)
      yield* Fiber.join(after)
      const stored = yield* pets.list({ limit: 100 })
      // The answer tells the truth: the pet was stored, so the create succeeded.
      assert.deepStrictEqual(stored.map((pet) => pet.name), ["Ghost"])
      if (Result.isFailure(created)) assert.fail(`answered "${created.failure.message}" for a stored pet`)
      assert.strictEqual(created.success.name, "Ghost")
    }).pipe(
      Effect.provide(Layer.provideMerge(
        PetRepositorySql.layer({ timeout: "1 second", sharedConnection: true }),
        freshDataDir
      ))
    ), 30_000)
})
