import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Exit, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as IdempotentCreatesSql from "../../../src/adapters/postgres/idempotency/IdempotentCreatesSql.ts"
import * as ApiKeyStoreSql from "../../../src/adapters/postgres/keys/ApiKeyStoreSql.ts"
import * as Migrations from "../../../src/adapters/postgres/Migrations.ts"
import * as OrderRepositorySql from "../../../src/adapters/postgres/orders/OrderRepositorySql.ts"
import * as SchemaMigrations from "../../../src/adapters/postgres/SchemaMigrations.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as PostgresClient from "../../../src/adapters/postgres/PostgresClient.ts"
import { StoreUnavailable } from "../../../src/domain/Errors.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import { recordingTracer } from "../observability/RecordingTracer.ts"
import { freshDatabaseUrl, postgresAvailable, serverUrl } from "./TestDatabase.ts"

const options = { timeout: "10 seconds" } as const

// The store as the service wires it: the four SQL adapters on one client.
const store = Layer.mergeAll(
  PetRepositorySql.layer(options),
  OrderRepositorySql.layer(options),
  IdempotentCreatesSql.layer(options),
  ApiKeyStoreSql.layer({ ...options, listen: true })
)

const client = (url: Redacted.Redacted) => PostgresClient.layer({ url, poolSize: 4, statementTimeout: Duration.seconds(10) })

/** The text of every statement sent while `effect` runs, from the statements' spans. */
const statementsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const { spans, tracer } = recordingTracer()
    return Effect.map(
      Effect.withTracer(effect, tracer),
      (result) => {
        const statements = spans.map((span) => span.attributes.get("db.query.text"))
        return [result, statements.filter((text) => typeof text === "string")] as const
      }
    )
  })

// Each run of the migrator locks its table first, whether or not anything is left to run.
const migratorRuns = (statements: ReadonlyArray<string>) =>
  statements.filter((text) => /^LOCK TABLE "animal_store_migrations"/.test(text)).length

const recorded = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ migration_id: number }>`
    SELECT migration_id FROM ${sql(SchemaMigrations.MIGRATIONS_TABLE)} ORDER BY migration_id`
  return rows.map((row) => row.migration_id)
})

describe.skipIf(!postgresAvailable)("Migrations on a PostgreSQL server", () => {
  it.live("the four SQL adapters built together run the migrations once, and one built alone still migrates", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabaseUrl
      const [, together] = yield* statementsOf(Layer.build(store.pipe(Layer.provide(client(url)))))
      assert.strictEqual(migratorRuns(together), 1, together.join("\n"))
      // Built again (a restart): once more, with nothing left to do.
      const [context, again] = yield* statementsOf(Layer.build(store.pipe(Layer.provideMerge(client(url)))))
      assert.strictEqual(migratorRuns(again), 1)
      const ids = (yield* SchemaMigrations.loader).map(([id]) => id)
      assert.deepStrictEqual(yield* recorded.pipe(Effect.provide(context)), ids)

      // An embedder that builds one adapter gets the schema too.
      const alone = yield* freshDatabaseUrl
      const keys = yield* Layer.build(ApiKeyStoreSql.layer({ ...options, listen: false }).pipe(Layer.provideMerge(client(alone))))
      assert.strictEqual((yield* recorded.pipe(Effect.provide(keys))).length, ids.length)
    }), 60_000)

  it.live("check: the latest migration or a later one recorded passes; fewer, or none, is SchemaOutOfDate", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(Migrations.layer.pipe(Layer.provideMerge(client(yield* freshDatabaseUrl))))
      const sql = Context.get(context, SqlClient.SqlClient)
      const { applied, check } = Context.get(context, Migrations.Migrations)
      const latest = Math.max(...applied.map(([id]) => id))
      // Numbers may skip (a migration of a branch not merged yet): the one before the latest.
      const previous = Math.max(...applied.map(([id]) => id).filter((id) => id !== latest))
      yield* check

      yield* sql`DELETE FROM ${sql(SchemaMigrations.MIGRATIONS_TABLE)} WHERE migration_id = ${latest}`
      const older = yield* Effect.flip(check)
      assert.deepStrictEqual(older, new Migrations.SchemaOutOfDate({ recorded: previous, latest }))
      assert.match(older.message, /^the database schema is missing or out of date: it records migrations up to \d{4}, this release needs \d{4}$/)

      // A newer release migrated it first (a rolling deploy): this one still serves.
      yield* sql`INSERT INTO ${sql(SchemaMigrations.MIGRATIONS_TABLE)} (migration_id, name) VALUES (${latest + 1000}, 'later')`
      yield* check

      yield* sql`DROP TABLE ${sql(SchemaMigrations.MIGRATIONS_TABLE)}`
      const none = yield* Effect.flip(check)
      assert.deepStrictEqual(none, new Migrations.SchemaOutOfDate({ recorded: undefined, latest }))
      assert.include(none.message, "it records no migration,")
    }), 60_000)

  it.live("a schema gone under the repository: calls and readiness are StoreUnavailable naming it, not defects", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(store.pipe(Layer.provideMerge(client(yield* freshDatabaseUrl))))
      const sql = Context.get(context, SqlClient.SqlClient)
      const pets = Context.get(context, PetRepository)
      yield* pets.ready

      yield* sql`DROP TABLE orders, pets, api_keys, idempotency_keys, ${sql(SchemaMigrations.MIGRATIONS_TABLE)} CASCADE`
      const exit = yield* Effect.exit(pets.get(PetId.make(1n)))
      assert.deepStrictEqual(
        Exit.findErrorOption(exit),
        Option.some(
          new StoreUnavailable({
            message:
              "the database schema is missing or out of date (SQLSTATE 42P01): the database was replaced or not migrated"
          })
        )
      )
      const notReady = yield* Effect.flip(pets.ready)
      assert.match(notReady.message, /^the database schema is missing or out of date: it records no migration, this release needs \d{4}$/)
    }), 60_000)

  it.live("a database dropped under the client is StoreUnavailable, not a defect", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabaseUrl
      const context = yield* Layer.build(store.pipe(Layer.provideMerge(client(url))))
      const pets = Context.get(context, PetRepository)
      yield* pets.ready
      const database = new URL(Redacted.value(url)).pathname.slice(1)
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP DATABASE ${sql(database)} WITH (FORCE)`).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 }))
      )
      const exit = yield* Effect.exit(pets.get(PetId.make(1n)))
      assert.deepStrictEqual(Exit.findErrorOption(exit), Option.some(new StoreUnavailable({ message: "the database is unavailable: SQLSTATE 3D000" })))
    }), 60_000)

  it.live("watch: quiet while the schema is there, SchemaOutOfDate once it is gone", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(Migrations.layer.pipe(Layer.provideMerge(client(yield* freshDatabaseUrl))))
      const sql = Context.get(context, SqlClient.SqlClient)
      const watch = Migrations.watch({ every: "20 millis", timeout: "5 seconds" }).pipe(Effect.provide(context))
      assert.isTrue(Option.isNone(yield* Effect.timeoutOption(watch, "300 millis")))
      yield* sql`DROP TABLE ${sql(SchemaMigrations.MIGRATIONS_TABLE)}`
      const lost = yield* Effect.flip(watch).pipe(Effect.timeout("10 seconds"))
      assert.strictEqual(lost._tag, "SchemaOutOfDate")
    }), 60_000)
})
