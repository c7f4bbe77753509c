import { afterAll, assert, describe, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as EmbeddedOpening from "../../../src/adapters/embedded/EmbeddedOpening.ts"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const modulePath = Path.join(repoRoot, "src/adapters/embedded/EmbeddedDatabase.ts")
// The project's Node (24) runs the TypeScript module directly; the Node that
// runs vitest may be older.
const node = Path.join(repoRoot, "node_modules/.bin/node")

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-embedded-"))
afterAll(() => Fs.rmSync(dataDir, { recursive: true, force: true }))

/**
 * Another process opening the database in `argv[1]`: prints "opened" and holds
 * it until killed, or prints the refusal and exits with 3.
 */
const otherProcessScript = `
import { Effect, Layer } from "effect"
import * as EmbeddedDatabase from ${JSON.stringify(pathToFileURL(modulePath).href)}
Layer.build(EmbeddedDatabase.layer({ dataDir: process.argv[1] })).pipe(
  Effect.andThen(Effect.sync(() => console.log("opened"))),
  Effect.andThen(Effect.never),
  Effect.scoped,
  Effect.catchTag("DataDirInUseError", (error) =>
    Effect.sync(() => {
      console.error(error.message)
      process.exit(3)
    })),
  Effect.runPromise
)
`
const otherProcessArgs = ["--input-type=module", "-e", otherProcessScript, dataDir]

const runOtherProcess = Effect.callback<{ readonly code: number | null; readonly stderr: string }>((resume) => {
  const child = execFile(node, otherProcessArgs, { cwd: repoRoot, timeout: 30_000 }, (_error, _stdout, stderr) =>
    resume(Effect.succeed({ code: child.exitCode, stderr })))
})

/** Starts another process that opens the database, once it reports so. */
const startOtherProcess = Effect.callback<ChildProcess>((resume) => {
  const child = spawn(node, otherProcessArgs, { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] })
  const onExit = (code: number | null) => resume(Effect.die(new Error(`the other process exited with ${code}`)))
  child.once("exit", onExit)
  child.stdout.on("data", (chunk: Buffer) => {
    if (!chunk.toString().includes("opened")) return
    child.off("exit", onExit)
    resume(Effect.succeed(child))
  })
  return Effect.sync(() => child.kill("SIGKILL"))
})

const killed = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    child.on("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

// The pid a lock file names (before the owner's start time, where /proc tells it).
const lockOwner = (lockPath: string) => Fs.readFileSync(lockPath, "utf8").split(" ")[0]?.trim()

const countAnimals = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly count: bigint }>`SELECT count(*) AS count FROM animals`
  return rows[0]?.count
})

// Opening an empty directory runs initdb (several seconds); later opens are fast.
const openTimeout = 60_000

layer(EmbeddedDatabase.layer({ dataDir }), { timeout: openTimeout, excludeTestServices: true })(
  "EmbeddedDatabase while open",
  (it) => {
    it.effect("creates a table and commits a transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE animals (id bigserial PRIMARY KEY, name text NOT NULL, price bigint)`
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO animals ${sql.insert({ name: "Rex", price: 10n })}`
          yield* sql`INSERT INTO animals ${sql.insert({ name: "Tom", price: 20n })}`
        }))
        const names = yield* sql<{ readonly name: string }>`SELECT name FROM animals ORDER BY id`
        assert.deepStrictEqual(names.map((row) => row.name), ["Rex", "Tom"])
      }))

    it.effect("rolls back a failing transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const failed = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO animals ${sql.insert({ name: "Ghost", price: 1n })}`
          yield* sql`INSERT INTO animals (id, name) VALUES (1, 'Duplicate key')`
        })).pipe(Effect.flip)
        assert.strictEqual(failed._tag, "SqlError")
        const ghosts = yield* sql`SELECT 1 FROM animals WHERE name = 'Ghost'`
        assert.strictEqual(ghosts.length, 0)
        assert.strictEqual(yield* countAnimals, 2n)
      }))

    it.effect("returns int8 as an exact bigint", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const max = 9223372036854775807n
        const [literal] = yield* sql<{ readonly max: bigint }>`SELECT 9223372036854775807::int8 AS max`
        assert.strictEqual(literal?.max, max)
        yield* sql`UPDATE animals SET price = ${max} WHERE name = 'Rex'`
        const [stored] = yield* sql<{ readonly price: bigint }>`SELECT price FROM animals WHERE name = 'Rex'`
        assert.strictEqual(stored?.price, max)
      }))

    it.effect("keeps every one of 200 concurrent inserts", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Effect.forEach(
          Array.from({ length: 200 }, (_, i) => i),
          (i) => sql`INSERT INTO animals ${sql.insert({ name: `Concurrent ${i}`, price: BigInt(i) })}`,
          { concurrency: "unbounded", discard: true }
        )
        const [row] = yield* sql<{ readonly count: bigint; readonly distinct: bigint }>`
          SELECT count(*) AS count, count(DISTINCT name) AS distinct FROM animals WHERE name LIKE 'Concurrent %'`
        assert.strictEqual(row?.count, 200n)
        assert.strictEqual(row?.distinct, 200n)
      }))

    it.effect("keeps the event loop running while a statement runs on the database thread", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        let longestGap = 0
        let last = performance.now()
        const ticker = setInterval(() => {
          const now = performance.now()
          longestGap = Math.max(longestGap, now - last)
          last = now
        }, 5)
        const started = performance.now()
        yield* sql`SELECT count(*) FROM generate_series(1, 3000000)`.pipe(
          Effect.ensuring(Effect.sync(() => clearInterval(ticker)))
        )
        const took = performance.now() - started
        // Run on the event loop, the statement would be one gap as long as itself.
        assert.isAbove(took, 200, "the statement is long enough to tell")
        assert.isBelow(longestGap, took / 4, `longest gap ${longestGap} ms during a ${took} ms statement`)
      }))

    it.effect("refuses a second process on the same directory", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runOtherProcess
        assert.strictEqual(code, 3, stderr)
        assert.include(
          stderr,
          `DATA_DIR ${dataDir} is in use by another Animal Store process (pid ${process.pid})`
        )
      }), openTimeout)
  }
)

describe("EmbeddedDatabase on a directory PGlite cannot open", () => {
  it.live("fails with PostgreSQL's reason and the directory, and leaves the lock free", () =>
    Effect.gen(function*() {
      const badDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-embedded-bad-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(badDir, { recursive: true, force: true })))
      // A data directory of a PostgreSQL this PGlite cannot run (what else it holds does not matter).
      Fs.writeFileSync(Path.join(badDir, "PG_VERSION"), "9\n")
      Fs.writeFileSync(Path.join(badDir, "postgresql.conf"), "")
      const error = yield* Layer.build(EmbeddedDatabase.layer({ dataDir: badDir })).pipe(Effect.scoped, Effect.flip)
      assert.strictEqual(error._tag, "EmbeddedDatabaseError")
      assert.strictEqual(error.message, `Cannot open the database in DATA_DIR ${badDir}`)
      assert.include(
        error._tag === "EmbeddedDatabaseError" ? String((error.cause as Error).message) : "",
        "FATAL: database files are incompatible with server"
      )
      assert.isFalse(Fs.existsSync(Path.join(badDir, EmbeddedDatabase.lockFileName)))
    }), openTimeout)
})

describe("EmbeddedDatabase after closing", () => {
  it.live("reopens the directory and sees the data", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* countAnimals, 202n)
    }).pipe(Effect.provide(EmbeddedDatabase.layer({ dataDir }))), openTimeout)

  it.live("takes over the lock of a process killed with SIGKILL", () =>
    Effect.gen(function*() {
      const other = yield* startOtherProcess
      yield* killed(other)
      const lockPath = Path.join(dataDir, EmbeddedDatabase.lockFileName)
      assert.strictEqual(lockOwner(lockPath), String(other.pid))
      yield* Effect.gen(function*() {
        assert.strictEqual(lockOwner(lockPath), String(process.pid))
        assert.strictEqual(yield* countAnimals, 202n)
      }).pipe(Effect.provide(EmbeddedDatabase.layer({ dataDir })))
      assert.isFalse(Fs.existsSync(lockPath))
    }), openTimeout)
})

describe("EmbeddedDatabase with an opening begun earlier", () => {
  it.live("adopts it (the lock is taken before the layer is built) and releases it with the layer", () =>
    Effect.gen(function*() {
      const lockPath = Path.join(dataDir, EmbeddedDatabase.lockFileName)
      const opening = EmbeddedOpening.begin(dataDir)
      assert.strictEqual(lockOwner(lockPath), String(process.pid))
      yield* Effect.gen(function*() {
        assert.strictEqual(yield* countAnimals, 202n)
      }).pipe(Effect.provide(EmbeddedDatabase.layer({ dataDir, opening })))
      assert.isFalse(Fs.existsSync(lockPath))
      // Released once: asking again is the same finished release.
      yield* Effect.promise(opening.release)
      const { _tag } = yield* Effect.promise(() => opening.opened)
      assert.strictEqual(_tag, "Opened")
    }), openTimeout)

  it.live("refuses an opening of another directory as a defect, and leaves that opening to its owner", () =>
    Effect.gen(function*() {
      const otherDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-embedded-other-"))
      const opening = EmbeddedOpening.begin(otherDir)
      yield* Effect.addFinalizer(() =>
        Effect.promise(opening.release).pipe(
          Effect.andThen(Effect.sync(() => Fs.rmSync(otherDir, { recursive: true, force: true })))
        )
      )
      const exit = yield* Layer.build(EmbeddedDatabase.layer({ dataDir, opening })).pipe(Effect.scoped, Effect.exit)
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      assert.isTrue(Fs.existsSync(Path.join(otherDir, EmbeddedDatabase.lockFileName)))
      assert.isFalse(Fs.existsSync(Path.join(dataDir, EmbeddedDatabase.lockFileName)))
    }), openTimeout)
})
