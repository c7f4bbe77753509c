import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as EmbeddedMaintenance from "../../../src/adapters/embedded/EmbeddedMaintenance.ts"

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-maintenance-"))
afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

const PAGE = "SELECT id FROM pets WHERE status = 'sold' AND id > 9000 ORDER BY id LIMIT 21"

interface TableStats {
  readonly analyzed: boolean
  readonly vacuumed: string | null
  readonly checkpointed: string
}

describe("EmbeddedMaintenance", () => {
  it.effect("analyzes, vacuums and checkpoints the embedded database on its schedule, which PGlite never does itself", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const stats = Effect.map(
        sql<TableStats>`SELECT last_analyze IS NOT NULL AS analyzed, last_vacuum::text AS vacuumed,
                               (SELECT checkpoint_lsn::text FROM pg_control_checkpoint()) AS checkpointed
                        FROM pg_stat_user_tables WHERE relname = 'pets'`,
        (rows) => rows[0]!
      )
      // The pass runs on its own fiber once the clock has moved: wait (in real time) until it is seen.
      const passSeen = (done: (stats: TableStats) => boolean) =>
        Effect.gen(function*() {
          for (let attempt = 0; attempt < 200; attempt++) {
            const current = yield* stats
            if (done(current)) return current
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
          }
          return yield* Effect.die(new Error("no maintenance pass was seen"))
        })
      const plan = Effect.map(sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN ${PAGE}`), (rows) =>
        rows.map((row) => row["QUERY PLAN"]).join("\n"))

      yield* sql`CREATE TABLE pets (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, status text)`
      yield* sql`CREATE INDEX pets_status_id ON pets (status, id)`
      yield* sql`INSERT INTO pets (status) SELECT (ARRAY['available', 'pending', 'sold'])[1 + g % 3]
                 FROM generate_series(1, 10000) g`
      const before = yield* stats
      assert.isFalse(before.analyzed, "PGlite analyzed the table by itself")
      // Without statistics the planner collects every match and sorts them.
      assert.include(yield* plan, "Sort")

      yield* TestClock.adjust(EmbeddedMaintenance.FIRST_PASS_AFTER)
      const first = yield* passSeen((current) =>
        current.analyzed && current.vacuumed !== null && current.checkpointed !== before.checkpointed
      )
      assert.notInclude(yield* plan, "Sort")

      // And again, every PASS_EVERY.
      yield* TestClock.adjust(EmbeddedMaintenance.PASS_EVERY)
      yield* passSeen((current) => current.vacuumed !== first.vacuumed)
    }).pipe(Effect.provide(Layer.fresh(EmbeddedDatabase.layer({ dataDir })))), 60_000)
})
