/**
 * The database thread seen from the main thread: replies and requests larger
 * than the shared buffers, refusal after close, a thread that keeps the
 * process alive only while it has work, and memory that stays flat however
 * many exchanges run.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as PgliteThread from "../../../src/adapters/embedded/PgliteThread.ts"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const modulePath = Path.join(repoRoot, "src/adapters/embedded/PgliteThread.ts")
const node = Path.join(repoRoot, "node_modules/.bin/node")

const dataDirs: Array<string> = []
const tempDataDir = (): string => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-thread-"))
  dataDirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dataDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const simpleQuery = (sql: string): Buffer => {
  const body = Buffer.from(`${sql}\0`, "utf8")
  const header = Buffer.alloc(5)
  header.write("Q", 0, "latin1")
  header.writeInt32BE(4 + body.length, 1)
  return Buffer.concat([header, body])
}

/** The first column of each DataRow in a reply. */
const firstColumns = (reply: Uint8Array): Array<string> => {
  const bytes = Buffer.from(reply)
  const values: Array<string> = []
  for (let offset = 0; bytes.length - offset >= 5; offset += 1 + bytes.readInt32BE(offset + 1)) {
    if (bytes.toString("latin1", offset, offset + 1) !== "D") continue
    const length = bytes.readInt32BE(offset + 7)
    values.push(bytes.toString("utf8", offset + 11, offset + 11 + length))
  }
  return values
}

/** The cluster state pg_control records (after the identifier and two version numbers). */
const clusterState = (dataDir: string): number =>
  Fs.readFileSync(Path.join(dataDir, "global/pg_control")).readInt32LE(16)
const inProduction = 6
const shutDown = 1

describe("PgliteThread", () => {
  let thread: PgliteThread.PgliteThread
  let dataDir: string

  beforeAll(async () => {
    dataDir = tempDataDir()
    thread = await PgliteThread.open(dataDir)
  }, 60_000)

  it("returns a reply far larger than its shared buffer whole", async () => {
    const [value] = firstColumns(await thread.exchange(simpleQuery("SELECT repeat('ab', 1500000) AS v")))
    assert.strictEqual(value?.length, 3_000_000)
    assert.isTrue(value === "ab".repeat(1_500_000))
  })

  it("takes a request far larger than its shared buffer", async () => {
    const literal = "xyz".repeat(700_000)
    const [length] = firstColumns(await thread.exchange(simpleQuery(`SELECT length('${literal}') AS n`)))
    assert.strictEqual(length, String(literal.length))
    // And the next, small, exchange is not confused by what the large ones left behind.
    assert.deepStrictEqual(firstColumns(await thread.exchange(simpleQuery("SELECT 'small' AS v"))), ["small"])
  })

  it("hands over each statement's answer as soon as it has run, not after the batch", async () => {
    const pieces: Array<{ readonly values: Array<string>; readonly atMs: number }> = []
    const started = Date.now()
    const rest = await thread.exchange(
      Buffer.concat([simpleQuery("SELECT 'first' AS v"), simpleQuery("SELECT pg_sleep(3)"), simpleQuery("SELECT 'last' AS v")]),
      (bytes) => pieces.push({ values: firstColumns(bytes), atMs: Date.now() - started })
    )
    const ended = Date.now() - started
    assert.strictEqual(rest.length, 0)
    // Answers published before the main thread reads come as one piece: the last two may.
    assert.deepStrictEqual(pieces[0]?.values, ["first"])
    assert.deepStrictEqual(pieces.flatMap((piece) => piece.values), ["first", "", "last"])
    // The first answer came while PGlite still slept (3 s; half of it as slack for a busy machine).
    assert.isBelow(pieces[0]!.atMs, ended - 1500, `pieces at ${pieces.map((piece) => piece.atMs).join(", ")} ms of ${ended}`)
  })

  it("closes PGlite cleanly (a shutdown checkpoint), then refuses exchanges", async () => {
    assert.strictEqual(clusterState(dataDir), inProduction)
    await thread.close()
    assert.strictEqual(clusterState(dataDir), shutDown)
    const refused = await thread.exchange(simpleQuery("SELECT 1")).then(() => undefined, (error: Error) => error)
    assert.strictEqual(refused?.message, "PgliteThread: the database is closed")
  })
})

/** Runs `script` (an ES module) in the project's Node with `args`; its output and exit code. */
const runScript = (script: string, nodeArgs: ReadonlyArray<string>, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      node,
      [...nodeArgs, "--input-type=module", "-e", script, ...args],
      { cwd: repoRoot, timeout: 120_000 },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr })
    )
  })

const moduleUrl = JSON.stringify(pathToFileURL(modulePath).href)
const bytesOf = (sql: string): string => `Buffer.from(${JSON.stringify([...simpleQuery(sql)])})`

describe("PgliteThread and the process", () => {
  it("keeps the process alive during an exchange, and not while idle", async () => {
    // Opens, runs one statement, and neither closes nor keeps anything else alive.
    const script = `
      import * as PgliteThread from ${moduleUrl}
      const thread = await PgliteThread.open(process.argv[1])
      const reply = Buffer.from(await thread.exchange(${bytesOf("SELECT pg_sleep(0.5)")}))
      console.log(reply.includes("SELECT 1") ? "answered" : "no answer")
    `
    const { code, stderr, stdout } = await runScript(script, [], [tempDataDir()])
    assert.strictEqual(stdout.trim(), "answered", stderr)
    assert.strictEqual(code, 0, stderr)
  }, 90_000)

  it("keeps neither thread's memory growing with the number of exchanges", async () => {
    // After a warm-up: the main thread's heap (exact, after a full GC) over 50,000
    // exchanges, and the process's resident memory over those and 3,000 replies of
    // 100 rows (PGlite's raw protocol call, which keeps every reply parsed, grew it
    // by 86 MB; racing each wait against a promise that never settles, the heap by 14 MB).
    const script = `
      import * as Fs from "node:fs"
      import * as PgliteThread from ${moduleUrl}
      const rssMiB = () => Number(/VmRSS:\\s+(\\d+)/.exec(Fs.readFileSync("/proc/self/status", "utf8"))[1]) / 1024
      const thread = await PgliteThread.open(process.argv[1])
      const small = ${bytesOf("SELECT 1")}
      const large = ${bytesOf("SELECT g, repeat('x', 40) FROM generate_series(1, 100) g")}
      const run = async (n, bytes) => { for (let i = 0; i < n; i++) await thread.exchange(bytes) }
      await run(2000, small)
      await run(500, large)
      globalThis.gc()
      const heap = process.memoryUsage().heapUsed
      const rss = rssMiB()
      await run(50000, small)
      await run(3000, large)
      globalThis.gc()
      const heapMiB = (process.memoryUsage().heapUsed - heap) / 1048576
      console.log(JSON.stringify({ heapMiB, rssMiB: rssMiB() - rss }))
      await thread.close()
    `
    const { code, stderr, stdout } = await runScript(script, ["--expose-gc"], [tempDataDir()])
    assert.strictEqual(code, 0, stderr)
    const growth = JSON.parse(stdout) as { readonly heapMiB: number; readonly rssMiB: number }
    assert.isBelow(growth.heapMiB, 1, stdout)
    assert.isBelow(growth.rssMiB, 32, stdout)
  }, 150_000)
})
