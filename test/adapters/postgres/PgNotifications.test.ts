import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Stream } from "effect"
import { SqlClient } from "effect/sql"
import * as EventLogSql from "../../../src/adapters/postgres/events/EventLogSql.ts"
import { EVENTS_CHANNEL } from "../../../src/adapters/postgres/events/EventSequencer.ts"
import * as ApiKeyStoreSql from "../../../src/adapters/postgres/keys/ApiKeyStoreSql.ts"
import { APPLICATION_NAME } from "../../../src/adapters/postgres/PgNotifications.ts"
import { EventLog } from "../../../src/ports/events/EventLog.ts"
import { ApiKeyStore } from "../../../src/ports/keys/ApiKeyStore.ts"
import { layerFreshDatabase, postgresAvailable } from "./TestDatabase.ts"

const options = { timeout: "10 seconds", listen: true } as const

// The listeners' connections to this database: every one the store names `animal-store …`.
const listeners = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ application_name: string }>`
    SELECT application_name FROM pg_stat_activity
    WHERE datname = current_database() AND application_name LIKE 'animal-store%'`
  return rows.map((row) => row.application_name)
})

describe.skipIf(!postgresAvailable)("PgNotifications on a PostgreSQL server", () => {
  it.live("the key store and the event log built together LISTEN on one connection, and each hears its own channel", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const log = yield* EventLog
      const store = yield* ApiKeyStore
      // Two readers of the feed, as the SSE fan-out and the webhook dispatcher are.
      yield* Effect.forkScoped(Stream.runDrain(log.appended))
      yield* Effect.forkScoped(Stream.runDrain(log.appended))
      // Both LISTENs are in place once the connection is up.
      yield* Effect.sleep("500 millis")
      assert.deepStrictEqual(yield* listeners, [APPLICATION_NAME])

      // Subscribed now, once listening has begun: nothing is pending.
      const heardKey = yield* Effect.forkScoped(Stream.runHead(yield* store.changes))
      const heardEvent = yield* Effect.forkScoped(Stream.runHead(log.appended))
      yield* Effect.sleep("100 millis")
      yield* sql`SELECT pg_notify(${EVENTS_CHANNEL}, '')`
      assert.deepStrictEqual(yield* Fiber.join(heardEvent).pipe(Effect.timeout("2 seconds")), Option.some(undefined))
      assert.isUndefined(heardKey.pollUnsafe())
      yield* sql`SELECT pg_notify(${ApiKeyStoreSql.CHANGES_CHANNEL}, '')`
      assert.deepStrictEqual(yield* Fiber.join(heardKey).pipe(Effect.timeout("2 seconds")), Option.some(undefined))
      assert.deepStrictEqual(yield* listeners, [APPLICATION_NAME])
    }).pipe(
      Effect.provide(
        Layer.mergeAll(ApiKeyStoreSql.layer(options), EventLogSql.layer(options)).pipe(
          Layer.provideMerge(layerFreshDatabase())
        )
      )
    ), 30_000)
})
