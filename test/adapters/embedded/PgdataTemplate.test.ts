/**
 * The pre-initialised data directory: it ships for the installed PGlite, an
 * empty DATA_DIR is filled from it (no initdb), and a restore cut short is
 * done again at the next start.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as PgdataTemplate from "../../../src/adapters/embedded/PgdataTemplate.ts"

const dirs: Array<string> = []
const tempDir = (): string => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-template-"))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

/** The system identifier initdb chose, from the first bytes of pg_control. */
const systemIdentifier = (dataDir: string): bigint =>
  Fs.readFileSync(Path.join(dataDir, "global/pg_control")).readBigUInt64LE(0)

/** The template's system identifier (each initdb picks a new one). */
const templateIdentifier = (): bigint => {
  const dir = tempDir()
  PgdataTemplate.restore(Fs.readFileSync(PgdataTemplate.file), dir)
  return systemIdentifier(dir)
}

const runningIdentifier = (dataDir: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ readonly id: bigint }>`SELECT system_identifier AS id FROM pg_control_system()`
    return row?.id
  }).pipe(Effect.provide(EmbeddedDatabase.layer({ dataDir })))

describe("PgdataTemplate", () => {
  it("ships for the installed PGlite", () => {
    assert.isTrue(
      Fs.existsSync(PgdataTemplate.file),
      `${PgdataTemplate.file} is missing: make it with node scripts/pgdataTemplate.ts`
    )
  })

  it.live("fills an empty DATA_DIR instead of initdb", () =>
    Effect.gen(function*() {
      const dataDir = Path.join(tempDir(), "data")
      assert.strictEqual(yield* runningIdentifier(dataDir), templateIdentifier())
      // And it is a database like any other: it reopens with what was written.
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE kept (x int)`
        yield* sql`INSERT INTO kept VALUES (42)`
      }).pipe(Effect.provide(EmbeddedDatabase.layer({ dataDir })))
      const rows = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly x: number }>`SELECT x FROM kept`
      }).pipe(Effect.provide(EmbeddedDatabase.layer({ dataDir })))
      assert.deepStrictEqual(rows, [{ x: 42 }])
    }), 60_000)

  it.live("restores again over a restore that was cut short", () =>
    Effect.gen(function*() {
      const dataDir = tempDir()
      PgdataTemplate.restore(Fs.readFileSync(PgdataTemplate.file), dataDir)
      // Cut short: the version file, written last, is missing, and a file is incomplete.
      Fs.rmSync(Path.join(dataDir, "PG_VERSION"))
      Fs.truncateSync(Path.join(dataDir, "global/pg_control"), 100)
      assert.strictEqual(yield* runningIdentifier(dataDir), templateIdentifier())
    }), 60_000)
})
