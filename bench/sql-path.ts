/**
 * One statement, in process, through each layer of Animal Store's SQL path against `pg`
 * called directly, as issue 21 asks: the CPU this process spends per call (the database's
 * own work is in another process and not counted), in interleaved rounds of sequential
 * calls on one connection.
 *
 *   node bench/sql-path.ts [calls per round]    (needs PostgreSQL at BENCH_PG_URL)
 *
 * Layers: `pg` with a named prepared statement; sql-pg's tagged statement (prepared by
 * sql-pg's own statement cache); that plus SqlSchema's row decoding; the repository's
 * `list` (decoding to `Pet`, the span helper and the store-call guard of UnavailableOrDie).
 */
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import pg from "pg"
import * as PetRepositorySql from "../src/adapters/postgres/pets/PetRepositorySql.ts"
import { unavailableOrDie } from "../src/adapters/postgres/UnavailableOrDie.ts"
import { PetRepository } from "../src/ports/pets/PetRepository.ts"
import { createDatabase, dropDatabase } from "./pg-admin.ts"

const ADMIN = process.env["BENCH_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const CALLS = Number(process.argv[2] ?? 5_000)
const ROUNDS = 5
const PAGE = "SELECT id, name, category_id, status FROM pets WHERE id > $1 ORDER BY id LIMIT $2"

const db = await createDatabase(ADMIN, "sql_path")
try {
  const client = PgClient.layer({ url: Redacted.make(db.url), maxConnections: 1, multiplex: false })
  const runtime = ManagedRuntime.make(
    Layer.provideMerge(PetRepositorySql.layer({ timeout: "5 seconds" }), client)
  )
  const repository = await runtime.runPromise(Effect.gen(function*() { return yield* PetRepository }))
  const sql = await runtime.runPromise(Effect.gen(function*() { return yield* SqlClient.SqlClient }))
  await runtime.runPromise(
    sql`INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, i % 7, 'available' FROM generate_series(1, 1000) i`
  )
  const guard = unavailableOrDie(Duration.seconds(5))
  const pool = new pg.Pool({ connectionString: db.url, max: 1 })

  const sides: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
    ["pg, named statement", () => pool.query({ name: "page", text: PAGE, values: [0, 20] })],
    ["sql-pg statement", () => runtime.runPromise(sql`SELECT id, name, category_id, status FROM pets WHERE id > ${0n} ORDER BY id LIMIT ${20}`)],
    ["sql-pg statement + UnavailableOrDie guard", () => runtime.runPromise(guard(PetRepositorySql.pageStatement(sql, { after: 0n, limit: 20, status: null })))],
    ["PetRepositorySql.list (decode, span, guard)", () => runtime.runPromise(repository.list({ limit: 20 }))]
  ]
  const cpu: Record<string, Array<number>> = {}
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [name, call] of sides) {
      const before = process.cpuUsage()
      for (let i = 0; i < CALLS; i++) await call()
      const used = process.cpuUsage(before)
      if (round > 0) (cpu[name] ??= []).push((used.user + used.system) / CALLS) // round 0 warms up
    }
  }
  const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const base = median(cpu["pg, named statement"]!)
  for (const [name] of sides) {
    const value = median(cpu[name]!)
    console.log(`${name.padEnd(48)} ${value.toFixed(1).padStart(6)} µs CPU per call  ${(value / base).toFixed(2)}x pg`)
  }
  await pool.end()
  await runtime.dispose()
} finally {
  await dropDatabase(ADMIN, db.name)
}
