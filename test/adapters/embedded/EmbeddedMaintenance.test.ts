import { afterAll, assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Logger } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as EmbeddedMaintenance from "../../../src/adapters/embedded/EmbeddedMaintenance.ts"

const dataDirs: Array<string> = []
const tempDataDir = (): string => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-maintenance-"))
  dataDirs.push(dir)
  return dir
}
const dataDir = tempDataDir()
afterAll(() => {
  for (const dir of dataDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const TABLES = ["stock_a", "stock_b", "stock_c"]

/** A fresh embedded database whose own maintenance stays out of the way, with TABLES of 40,000 rows each. */
const loadedDatabase = () =>
  Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const table of TABLES) {
      yield* sql.unsafe(`CREATE TABLE ${table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text, status text)`)
      yield* sql.unsafe(`CREATE INDEX ON ${table} (status, id)`)
      yield* sql.unsafe(`INSERT INTO ${table} (name, status) SELECT 'pet ' || g, (ARRAY['available', 'pending', 'sold'])[1 + g % 3]
                         FROM generate_series(1, 40000) g`)
    }
  })).pipe(Layer.provideMerge(EmbeddedDatabase.layer({
    dataDir: tempDataDir(),
    maintenance: { firstPassAfter: Duration.hours(1), passEvery: Duration.hours(1), passWithin: Duration.hours(1) }
  })))

/** How many of TABLES have been analyzed. */
const analyzed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly done: number }>`SELECT count(*)::int AS done FROM pg_stat_user_tables
                                                    WHERE relname IN ${sql.in(TABLES)} AND last_analyze IS NOT NULL`
  return rows[0]!.done
})

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

      // And again, every PASS_EVERY, once the table has changed.
      yield* sql`UPDATE pets SET status = 'pending' WHERE id % 2 = 0`
      yield* TestClock.adjust(EmbeddedMaintenance.PASS_EVERY)
      yield* passSeen((current) => current.vacuumed !== first.vacuumed)
    }).pipe(Effect.provide(Layer.fresh(EmbeddedDatabase.layer({ dataDir })))), 60_000)
  it.live("answers a request sent during a pass between two tables, not after the whole pass", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const maintenance = yield* Effect.forkChild(EmbeddedMaintenance.run(sql, {
        firstPassAfter: Duration.zero,
        passEvery: Duration.hours(1),
        passWithin: Duration.minutes(1)
      }))
      // Requests sent one after another through the pass: what each saw of its progress.
      const seen: Array<number> = []
      while (seen.at(-1) !== TABLES.length) {
        seen.push(yield* analyzed)
        yield* Effect.sleep("10 millis")
      }
      yield* Fiber.interrupt(maintenance)
      assert.isTrue(
        seen.some((done) => done > 0 && done < TABLES.length),
        `no request was answered while the pass was under way: ${seen.join(",")}`
      )
    }).pipe(Effect.provide(loadedDatabase())), 120_000)

  it.live("stops a pass at its bound, says so, and takes up the tables it left in the next passes", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const lines: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []
      const maintenance = yield* Effect.forkChild(EmbeddedMaintenance.run(sql, {
        firstPassAfter: Duration.zero,
        passEvery: Duration.millis(100),
        // Less than any table takes: each pass is cut short after the table it is at.
        passWithin: Duration.millis(1)
      }).pipe(Effect.provide(Logger.layer([Logger.map(Logger.formatStructured, (line) => lines.push(line))]))))
      for (let attempt = 0; (yield* analyzed) < TABLES.length; attempt++) {
        if (attempt === 600) return yield* Effect.die(new Error("the tables a cut pass left were never maintained"))
        yield* Effect.sleep("50 millis")
      }
      yield* Fiber.interrupt(maintenance)
      const stopped = lines.filter((line) => line.message === "Embedded database maintenance stopped at its bound")
      assert.isAbove(stopped.length, 0, `logged: ${lines.map((line) => String(line.message)).join("; ")}`)
      assert.strictEqual(stopped[0]!.annotations["maintenance.bound"], "1ms")
      assert.isAbove(Number(stopped[0]!.annotations["maintenance.tables.left"]), 0)
    }).pipe(Effect.provide(loadedDatabase())), 120_000)
})
