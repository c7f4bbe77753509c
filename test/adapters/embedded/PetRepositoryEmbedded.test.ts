import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/PetRepositorySql.ts"
import { CategoryId } from "../../../src/domain/CategoryId.ts"
import { StoreUnavailable } from "../../../src/domain/Errors.ts"
import { NewPet } from "../../../src/domain/NewPet.ts"
import { PetName } from "../../../src/domain/PetName.ts"
import { PetRepository } from "../../../src/ports/PetRepository.ts"
import { petRepositoryContract } from "../../ports/PetRepositoryContract.ts"

// A throwaway data directory per run, removed when the store closes.
const freshDataDir = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "animal-store-contract-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  return EmbeddedDatabase.layer({ dataDir })
}))

petRepositoryContract(
  "embedded",
  PetRepositorySql.layer({ timeout: "10 seconds", sharedConnection: true }).pipe(Layer.provide(freshDataDir)),
  { runs: 30, timeout: 120_000 }
)

describe("PetRepositorySql on embedded, when PGlite is busy past the deadline", () => {
  // PGlite runs one statement at a time: a create queued behind a long one fails at the
  // deadline, and must not be stored when PGlite gets to it, or a client that retries
  // the 503 stores the pet twice.
  const store = Layer.provideMerge(PetRepositorySql.layer({ timeout: "300 millis", sharedConnection: true }), freshDataDir)

  it.live("a create answered StoreUnavailable is not stored later", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pets = yield* PetRepository
      const busy = yield* Effect.forkChild(sql`SELECT pg_sleep(1.5)`)
      yield* Effect.sleep("100 millis")
      const failure = yield* Effect.flip(pets.create(new NewPet({ name: PetName.make("Ghost"), categoryId: CategoryId.make(1n) })))
      assert.strictEqual(failure._tag, "StoreUnavailable")
      yield* Fiber.join(busy)
      // Statements run in order: once this one has, whatever was queued before it has too.
      yield* sql`SELECT 1`
      const stored = yield* pets.list({ limit: 100 })
      assert.deepStrictEqual(stored.map((pet) => pet.name), [])
    }).pipe(Effect.provide(store)), 30_000)

  it.live("a create the database reaches after three quarters of the deadline stores nothing and says so", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pets = yield* PetRepository
      // Reached about 1.7 s into a 2 s deadline: answered in time, but after the 1.5 s the insert allows.
      const busy = yield* Effect.forkChild(sql`SELECT pg_sleep(1.8)`)
      yield* Effect.sleep("100 millis")
      const failure = yield* Effect.flip(pets.create(new NewPet({ name: PetName.make("Late"), categoryId: CategoryId.make(1n) })))
      assert.deepStrictEqual(failure, new StoreUnavailable({ message: "the database did not start the create within 1s 500ms" }))
      yield* Fiber.join(busy)
      assert.deepStrictEqual((yield* pets.list({ limit: 100 })).map((pet) => pet.name), [])
    }).pipe(Effect.provide(Layer.provideMerge(PetRepositorySql.layer({ timeout: "2 seconds", sharedConnection: true }), freshDataDir))), 30_000)
})
