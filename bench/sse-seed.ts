/**
 * Child process: a store with a long event log, for the SSE section's non-reading streams.
 * Migrates an empty database (PostgreSQL, or an embedded DATA_DIR that no service holds),
 * then writes `count` pets with generate_series (as inventory.ts and scale.ts seed) and,
 * for each, the `pet.created` event the service would have written for it: ids 1..count,
 * `data` the pet as the API writes it, in the statement PetRepositorySql's create uses
 * (petData: no `status` key when it has none, `version` last), and
 * the `events_id` sequence advanced past them, so that the next change is numbered
 * count + 1 by the EventSequencer. Then ANALYZEs both tables.
 *
 * Usage (from bench/sse.ts): node bench/sse-seed.ts '<json SeedArgs>'
 * Writes a SeedResult as JSON to args.resultPath.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { writeFileSync } from "node:fs"
import * as EmbeddedDatabase from "../src/adapters/embedded/EmbeddedDatabase.ts"
import * as Migrations from "../src/adapters/postgres/Migrations.ts"
import { runChildMain } from "./child-main.ts"

export interface SeedArgs {
  readonly store: "embedded" | "postgres"
  readonly resultPath: string
  readonly count: number
  /** embedded: an empty data directory, which the service opens afterwards. */
  readonly dataDir?: string
  /** postgres: URL of an empty database. */
  readonly url?: string
}

export interface SeedResult {
  readonly pets: number
  readonly events: number
  readonly lastEventId: number
  readonly millis: number
}

const args = JSON.parse(process.argv[2] ?? "{}") as SeedArgs

const seed = Effect.gen(function*() {
  yield* Migrations.Migrations
  const sql = yield* SqlClient.SqlClient
  const started = performance.now()
  yield* sql`INSERT INTO pets (name, category_id, status)
             SELECT 'pet-' || i, 1 + i % 50, (ARRAY['available', 'pending', 'sold', NULL])[1 + i % 4]
             FROM generate_series(1, ${args.count}::int) AS i ORDER BY i`
  yield* sql`INSERT INTO events (id, type, occurred_at, data)
             SELECT id, 'pet.created', created_at,
               json_strip_nulls(json_build_object(
                 'id', id, 'name', name, 'categoryId', category_id, 'status', status, 'version', version))
             FROM pets ORDER BY id`
  yield* sql`SELECT setval('events_id', (SELECT max(id) FROM events))`
  yield* sql`ANALYZE pets`
  yield* sql`ANALYZE events`
  const [row] = yield* sql<{ pets: string; events: string; last: string }>`
    SELECT (SELECT count(*) FROM pets)::text AS pets, (SELECT count(*) FROM events)::text AS events,
           (SELECT max(id) FROM events)::text AS last`
  const result: SeedResult = {
    pets: Number(row!.pets),
    events: Number(row!.events),
    lastEventId: Number(row!.last),
    millis: performance.now() - started
  }
  writeFileSync(args.resultPath, JSON.stringify(result, null, 2))
}).pipe(Effect.provide(Migrations.layer))

const client = args.store === "embedded"
  ? EmbeddedDatabase.layer({ dataDir: args.dataDir ?? "" })
  : PgClient.layer({ url: Redacted.make(args.url ?? ""), maxConnections: 1 })

runChildMain(`sse seed (${args.store})`, seed.pipe(Effect.provide(Layer.orDie(client)), Effect.scoped))
