import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Duration, Effect, Fiber, Layer, type Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { fingerprintOf } from "../../../../src/adapters/idempotency/RequestFingerprint.ts"
import * as IdempotentCreatesSql from "../../../../src/adapters/postgres/idempotency/IdempotentCreatesSql.ts"
import * as PetRepositorySql from "../../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as PostgresClient from "../../../../src/adapters/postgres/PostgresClient.ts"
import { CategoryId } from "../../../../src/domain/pets/CategoryId.ts"
import { StoreUnavailable } from "../../../../src/domain/Errors.ts"
import { IdempotencyKey } from "../../../../src/domain/idempotency/IdempotencyKey.ts"
import { createPetIdentity, IdempotentRequest, StoredResponse } from "../../../../src/domain/idempotency/IdempotentRequest.ts"
import { NewPet } from "../../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../../src/domain/pets/PetName.ts"
import { IdempotentCreates } from "../../../../src/ports/idempotency/IdempotentCreates.ts"
import { PetRepository } from "../../../../src/ports/pets/PetRepository.ts"
import { CONTRACT_OPTIONS, idempotentCreatesContract } from "../../../ports/idempotency/IdempotentCreatesContract.ts"
import { freshDatabaseUrl, layerFreshDatabase, postgresAvailable } from "../TestDatabase.ts"

const options = { timeout: "10 seconds", ...CONTRACT_OPTIONS } as const

const store = Layer.mergeAll(PetRepositorySql.layer(options), IdempotentCreatesSql.layer(options))

// One service instance: its own pool, repositories and in-process key registry.
const instance = (url: Redacted.Redacted, sweepEvery: Duration.Input = "1 hour") =>
  Effect.map(
    Layer.build(
      Layer.mergeAll(PetRepositorySql.layer(options), IdempotentCreatesSql.layer({ ...options, sweepEvery }))
        .pipe(Layer.provideMerge(PostgresClient.layer({ url, poolSize: 3, statementTimeout: Duration.seconds(10) })))
    ),
    (context) => ({
      pets: Context.get(context, PetRepository),
      idempotent: Context.get(context, IdempotentCreates),
      sql: Context.get(context, SqlClient.SqlClient)
    })
  )

const pet = new NewPet({ name: PetName.make("Rex"), categoryId: CategoryId.make(1n) })
const request = (key: string) =>
  new IdempotentRequest({ keyId: "caller-a", key: IdempotencyKey.make(key), fingerprint: fingerprintOf(createPetIdentity(pet)) })
const created = (id: bigint) => new StoredResponse({ status: 201, body: `{"id":${id}}`, location: `/v1/pets/${id}` })

const countPets = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ count: string }>`SELECT count(*)::text AS count FROM pets`, (rows) => Number(rows[0]!.count))

describe.skipIf(!postgresAvailable)("PostgreSQL server", () => {
  idempotentCreatesContract("postgres", store.pipe(Layer.provide(layerFreshDatabase())))

  it.live("two instances: the database lock makes the second wait, then 409 while the first still runs", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabaseUrl
      const [a, b] = yield* Effect.all([instance(url), instance(url)], { concurrency: 2 })
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(a.idempotent.run(
        request("across-instances"),
        Deferred.succeed(started, undefined).pipe(
          Effect.andThen(Deferred.await(release)),
          Effect.andThen(a.pets.create(pet)),
          Effect.map((pet) => created(pet.id))
        )
      ))
      yield* Deferred.await(started)
      const inUse = yield* Effect.flip(b.idempotent.run(request("across-instances"), Effect.die("must not run")))
      assert.strictEqual(inUse._tag, "IdempotencyKeyInUse")
      // Released within the wait, the other instance's duplicate replays the first answer.
      const waiting = yield* Effect.forkChild(b.idempotent.run(request("across-instances"), Effect.die("must not run")))
      yield* Effect.sleep("50 millis")
      yield* Deferred.succeed(release, undefined)
      const answer = yield* Fiber.join(first)
      assert.deepStrictEqual(yield* Fiber.join(waiting), { response: answer.response, replayed: true })
      assert.strictEqual(yield* countPets(a.sql), 1)
    }), 60_000)

  it.live("the create and its kept answer commit together: a failure after the insert leaves neither", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabaseUrl
      const a = yield* instance(url)
      const failed = yield* Effect.flip(a.idempotent.run(
        request("rolled-back"),
        a.pets.create(pet).pipe(Effect.andThen(Effect.fail(new StoreUnavailable({ message: "gone mid-way" }))))
      ))
      assert.strictEqual(failed._tag, "StoreUnavailable")
      assert.strictEqual(yield* countPets(a.sql), 0)
      assert.deepStrictEqual(yield* a.sql`SELECT idempotency_key FROM idempotency_keys`, [])
    }), 60_000)

  it.live("expired keys are deleted by the periodic sweep", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabaseUrl
      const a = yield* instance(url, "200 millis")
      yield* a.idempotent.run(request("swept"), Effect.map(a.pets.create(pet), (pet) => created(pet.id)))
      assert.strictEqual((yield* a.sql`SELECT 1 FROM idempotency_keys`).length, 1)
      yield* Effect.sleep("2600 millis")
      assert.strictEqual((yield* a.sql`SELECT 1 FROM idempotency_keys`).length, 0)
    }), 60_000)
})
