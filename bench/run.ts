/**
 * `npm run bench`: the Animal Store benchmark suite.
 *
 * Every figure is reported next to a reference measured in the same run on the same
 * machine, as a ratio ("cost x ref": how many times more time, or memory, the subject
 * needs than the reference). There are no absolute thresholds and nothing here fails
 * on a slow result; this is not part of `npm test`.
 *
 * Sections (BENCH_SECTIONS=repo,http,memory,hostile picks some; all by default):
 *   repo     PetRepository adapters vs plain JS / raw SQL through the same client
 *   http     the real service (memory, embedded) vs a minimal node:http server
 *   memory   heap per 100k pets: memory adapter vs a plain Map
 *   hostile  cost of rejecting large/invalid bodies; /healthz latency under a 1 MiB flood
 *
 * Environment: BENCH_HTTP_SECONDS (measured seconds per HTTP scenario, default 4),
 * BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres; must be 127.0.0.1).
 *
 * Results: printed tables, and bench/results/latest.json.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { ChildProcess } from "node:child_process"
import { execFileSync } from "node:child_process"
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { get } from "node:http"
import { connect } from "node:net"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import type { BodyName } from "./bodies.ts"
import {
  BENCH_DIR,
  cpuMillisOf,
  fmt,
  fmtRatio,
  freePort,
  HOST,
  killAllSync,
  NODE,
  ROOT,
  runNodeChild,
  sleep,
  spawnTracked,
  stopAll,
  stopChild,
  table,
  waitExit
} from "./lib.ts"
import type { LoadArgs, LoadResult } from "./loadgen.ts"
import type { MemoryKind, MemoryResult } from "./memory.ts"
import type { RepositoryArgs, RepositoryResult, RepositoryRow } from "./repository.ts"

if (Number(process.versions.node.split(".")[0]) < 24) {
  console.error(`bench needs Node 24 (this is ${process.version}); run node_modules/.bin/node bench/run.ts`)
  process.exit(1)
}

const SECTIONS = new Set((process.env["BENCH_SECTIONS"] ?? "repo,http,memory,hostile").split(",").map((s) => s.trim()))
const HTTP_SECONDS = Math.min(30, Math.max(1, Number(process.env["BENCH_HTTP_SECONDS"] ?? "4")))
const PG_URL = process.env["BENCH_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const API_KEY = "bench-key-0123456789abcdef"
const CONCURRENCY = 32

const work = mkdtempSync(join(tmpdir(), "animal-store-bench-"))
let resultCounter = 0
const resultFile = (label: string) => join(work, `${++resultCounter}-${label.replace(/[^a-z0-9]+/gi, "_")}.json`)

const output: Record<string, unknown> = {}
const notes: Array<string> = []
const say = (text: string) => process.stdout.write(`${text}\n`)
const note = (text: string) => {
  notes.push(text)
  say(`  note: ${text}`)
}

// ---------------------------------------------------------------------------------------
// Cleanup on every path out

let cleanedUp = false
const cleanup = async () => {
  if (cleanedUp) return
  cleanedUp = true
  await stopAll()
  rmSync(work, { recursive: true, force: true })
}
process.on("exit", () => killAllSync())
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    say(`\n${signal}: stopping child processes`)
    void cleanup().finally(() => process.exit(130))
  })
}

// ---------------------------------------------------------------------------------------
// Helpers

const tcpReachable = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1_000 })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.once("connect", () => done(true))
    socket.once("timeout", () => done(false))
    socket.once("error", () => done(false))
  })

const httpStatus = (port: number, path: string): Promise<number> =>
  new Promise((resolve) => {
    const req = get({ host: HOST, port, path, timeout: 1_000 }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", () => resolve(0))
    req.on("timeout", () => req.destroy())
  })

interface Server {
  readonly name: string
  readonly port: number
  readonly child: ChildProcess
  readonly logPath: string | undefined
  readonly stderr: () => string
}

const waitHealthy = async (server: Server, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${server.name} exited during startup: ${server.stderr().trim().slice(-2_000)}`)
    }
    if ((await httpStatus(server.port, "/healthz")) === 200) return
    await sleep(100)
  }
  throw new Error(`${server.name} did not answer /healthz within ${timeoutMs} ms`)
}

/** Starts `node src/main.ts` with a clean environment (no inherited DATABASE_URL etc.). */
const startService = async (name: string, env: Record<string, string>): Promise<Server> => {
  const port = await freePort()
  const logPath = join(work, `${name.replace(/[^a-z0-9]+/gi, "_")}.log`)
  const logFd = openSync(logPath, "w")
  const child = spawnTracked(NODE, ["src/main.ts"], {
    cwd: ROOT,
    stdio: ["ignore", logFd, "pipe"],
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: process.env["HOME"] ?? "",
      HOST,
      PORT: String(port),
      API_KEYS: API_KEY,
      ...env
    }
  })
  closeSync(logFd)
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-8_000)
  })
  const server: Server = { name, port, child, logPath, stderr: () => stderr }
  await waitHealthy(server, 30_000)
  return server
}

const startReference = async (): Promise<Server> => {
  const port = await freePort()
  const child = spawnTracked(NODE, [`${BENCH_DIR}reference-server.ts`, JSON.stringify({ port, apiKeys: [API_KEY] })], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-8_000)
  })
  const server: Server = { name: "reference", port, child, logPath: undefined, stderr: () => stderr }
  await waitHealthy(server, 10_000)
  return server
}

const logLines = (server: Server): number => {
  if (server.logPath === undefined) return 0
  try {
    return readFileSync(server.logPath, "utf8").split("\n").filter((line) => line !== "").length
  } catch {
    return 0
  }
}

type LoadSpec = Omit<LoadArgs, "port" | "resultPath">

interface LoadRun {
  readonly result: LoadResult
  /** Server CPU time over the whole loadgen run divided by every request it completed. */
  readonly serverCpuUsPerRequest: number | undefined
}

/** Runs the load generator (its own process) against `server`. */
const runLoad = async (server: Server, label: string, spec: LoadSpec): Promise<LoadRun> => {
  const resultPath = resultFile(label)
  const cpuBefore = cpuMillisOf(server.child.pid)
  const run = await runNodeChild<LoadResult>({
    script: "loadgen.ts",
    arg: { ...spec, port: server.port, resultPath } satisfies LoadArgs,
    resultPath,
    timeoutMs: spec.durationMs + spec.timeoutMs + 15_000
  })
  const cpuAfter = cpuMillisOf(server.child.pid)
  if (run.result === undefined) {
    throw new Error(`load generator failed for ${label} (exit ${run.exit}): ${run.stderr.trim().slice(-1_000)}`)
  }
  const serverCpuUsPerRequest = cpuBefore === undefined || cpuAfter === undefined || run.result.completedTotal === 0
    ? undefined
    : ((cpuAfter - cpuBefore) * 1000) / run.result.completedTotal
  return { result: run.result, serverCpuUsPerRequest }
}

const nonOk = (result: LoadResult, ok: (status: number) => boolean): string => {
  const parts: Array<string> = []
  for (const [status, count] of Object.entries(result.statuses)) if (!ok(Number(status))) parts.push(`${status}:${count}`)
  for (const [error, count] of Object.entries(result.errors)) parts.push(`${error}:${count}`)
  return parts.length === 0 ? "0" : parts.join(" ")
}

const statusSummary = (result: LoadResult): string =>
  [
    ...Object.entries(result.statuses).map(([status, count]) => `${status}x${count}`),
    ...Object.entries(result.errors).map(([error, count]) => `${error}x${count}`)
  ].join(" ")

const dropDatabase = (adminUrl: string, database: string) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP DATABASE IF EXISTS ${sql(database)} WITH (FORCE)`).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(adminUrl), maxConnections: 1 })),
      Effect.timeout("10 seconds"),
      Effect.ignore
    )
  )

// ---------------------------------------------------------------------------------------
// 1. Repository throughput

const repositorySection = async () => {
  say("\n== 1. Repository throughput (sequential calls, one process; reference in the same process) ==")
  say("   memory: vs a plain Map + arrays doing the same work; embedded/postgres: vs the same SQL sent through")
  say("   the same @effect/sql-pg client without the repository (no schema decode, spans, timeout).")
  const rows: Array<RepositoryRow> = []
  const skipped: Array<string> = []
  const results: Array<RepositoryResult> = []

  const runAdapter = async (args: Omit<RepositoryArgs, "resultPath">, timeoutMs: number) => {
    const resultPath = resultFile(`repo-${args.adapter}`)
    say(`   running ${args.adapter} ...`)
    const run = await runNodeChild<RepositoryResult>({
      script: "repository.ts",
      arg: { ...args, resultPath } satisfies RepositoryArgs,
      resultPath,
      timeoutMs
    })
    if (run.result === undefined) {
      const why = run.timedOut ? "timed out" : `exit ${run.exit}`
      note(`repository/${args.adapter} produced no result (${why}): ${run.stderr.trim().split("\n").slice(-5).join(" | ")}`)
      skipped.push(args.adapter)
      return
    }
    results.push(run.result)
    rows.push(...run.result.rows)
    for (const text of run.result.notes) note(`repository/${args.adapter}: ${text}`)
  }

  await runAdapter({ adapter: "memory", creates: 60_000, gets: 100_000, pages: 50_000, budgetMs: 5_000 }, 60_000)
  await runAdapter({
    adapter: "embedded",
    creates: 2_000,
    gets: 3_000,
    pages: 1_000,
    budgetMs: 5_000,
    dataDir: join(work, "repo-pglite")
  }, 90_000)

  const pg = new URL(PG_URL)
  if (pg.hostname !== "127.0.0.1" && pg.hostname !== "localhost") {
    note(`postgres skipped: BENCH_PG_URL must point at 127.0.0.1 (got ${pg.hostname})`)
    skipped.push("postgres")
  } else if (!(await tcpReachable("127.0.0.1", Number(pg.port || 5432)))) {
    note(`postgres skipped: nothing listens on 127.0.0.1:${pg.port || 5432}`)
    skipped.push("postgres")
  } else {
    const database = `animal_store_bench_${process.pid}_${Date.now().toString(36)}`
    try {
      await runAdapter({
        adapter: "postgres",
        creates: 2_000,
        gets: 3_000,
        pages: 1_000,
        budgetMs: 5_000,
        adminUrl: PG_URL,
        database
      }, 90_000)
    } finally {
      // The child drops its database itself; this catches a child that was killed.
      await dropDatabase(PG_URL, database)
    }
  }

  say("")
  say(table(
    ["adapter", "operation", "n", "adapter op/s", "reference op/s", "cost x ref", "round spread", "rows"],
    rows.map((row) => [
      row.adapter,
      row.op,
      String(row.count),
      fmt(row.subjectOpsPerSec),
      fmt(row.referenceOpsPerSec),
      fmtRatio(row.ratio) + (row.referenceMs * row.referenceRepeat < 20 ? "*" : ""),
      `${fmt(row.ratioMin, 2)}-${fmt(row.ratioMax, 2)}`,
      row.subjectRows === undefined ? "" : `${row.subjectRows}/${row.referenceRows}`
    ])
  ))
  say("   cost x ref = median over 10 interleaved rounds (ABBA order) of adapter time / reference time; 1.0x = no")
  say("   overhead. round spread = min-max of those per-round ratios: wide means a noisy run. op/s are totals.")
  say("   * = reference measured for under 20 ms in total: an order of magnitude only.")
  output["repository"] = { rows, skipped, setupMs: Object.fromEntries(results.map((r) => [r.adapter, r.setupMs])) }
}

// ---------------------------------------------------------------------------------------
// 2. HTTP end to end

interface HttpRow {
  readonly scenario: string
  readonly target: string
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly problems: string
  readonly serverCpuUsPerRequest: number | undefined
  readonly clientCpuPercent: number
}

const SCENARIOS: ReadonlyArray<{ readonly name: string; readonly spec: Partial<LoadSpec> & Pick<LoadSpec, "method" | "path">; readonly ok: number }> = [
  { name: "POST /v1/pets", spec: { method: "POST", path: "/v1/pets", body: "small" }, ok: 201 },
  { name: "GET /v1/pets?limit=20", spec: { method: "GET", path: "/v1/pets?limit=20" }, ok: 200 },
  { name: "GET /v1/pets/{id}", spec: { method: "GET", path: "/v1/pets/{id}", idMax: 1_000 }, ok: 200 }
]

let sharedMemoryService: Server | undefined
let sharedReference: Server | undefined

const httpSection = async () => {
  say(`\n== 2. HTTP end to end (${CONCURRENCY} keep-alive connections, 1 s warm-up + ${HTTP_SECONDS} s per scenario) ==`)
  say("   the real service (node src/main.ts) vs bench/reference-server.ts (node:http + Map, same routes and JSON);")
  say("   the load generator is a separate node process on the same 2 shared cores.")
  const memory = await startService("service memory", { STORE: "memory" })
  sharedMemoryService = memory
  const quiet = await startService("service memory LOG_LEVEL=warn", { STORE: "memory", LOG_LEVEL: "warn" })
  const dataDir = join(work, "http-pglite")
  const embedded = await startService("service embedded", { STORE: "embedded", DATA_DIR: dataDir })
  const reference = await startReference()
  sharedReference = reference
  const targets = [memory, quiet, embedded, reference]
  const rows: Array<HttpRow> = []

  // Scenario-major order: every target runs each scenario within the same minute or so.
  for (const scenario of SCENARIOS) {
    for (const target of targets) {
      say(`   ${scenario.name} -> ${target.name}`)
      const run = await runLoad(target, `${target.name}-${scenario.name}`, {
        concurrency: CONCURRENCY,
        durationMs: (HTTP_SECONDS + 1) * 1_000,
        warmupMs: 1_000,
        timeoutMs: 5_000,
        headers: { authorization: `Bearer ${API_KEY}` },
        ...scenario.spec
      })
      rows.push({
        scenario: scenario.name,
        target: target.name,
        rps: run.result.rps,
        p50: run.result.latencyMs.p50,
        p99: run.result.latencyMs.p99,
        requests: run.result.requests,
        problems: nonOk(run.result, (status) => status === scenario.ok),
        serverCpuUsPerRequest: run.serverCpuUsPerRequest,
        clientCpuPercent: (100 * run.result.clientCpuMs) / run.result.windowMs
      })
    }
  }

  const refOf = (scenario: string) => rows.find((row) => row.scenario === scenario && row.target === "reference")
  say("")
  say(table(
    ["scenario", "target", "req/s", "p50 ms", "p99 ms", "srv CPU us/req", "loadgen CPU", "non-2xx/err", "cost x ref (1/rps)", "p50 x ref", "p99 x ref", "CPU/req x ref"],
    rows.map((row) => {
      const ref = refOf(row.scenario)
      const isRef = row.target === "reference"
      return [
        row.scenario,
        row.target,
        fmt(row.rps),
        fmt(row.p50),
        fmt(row.p99),
        fmt(row.serverCpuUsPerRequest),
        `${fmt(row.clientCpuPercent, 2)}%`,
        row.problems,
        isRef || ref === undefined ? "" : fmtRatio(ref.rps / row.rps),
        isRef || ref === undefined ? "" : fmtRatio(row.p50 / ref.p50),
        isRef || ref === undefined ? "" : fmtRatio(row.p99 / ref.p99),
        isRef || ref === undefined || row.serverCpuUsPerRequest === undefined || ref.serverCpuUsPerRequest === undefined
          ? ""
          : fmtRatio(row.serverCpuUsPerRequest / ref.serverCpuUsPerRequest)
      ]
    })
  ))
  say("   srv CPU us/req = server process user+sys CPU / requests it completed (10 ms /proc resolution); it is")
  say("   less sensitive to the shared cores than req/s. loadgen CPU near 100% means the generator, not the")
  say("   server, may be the limit (most likely for the reference).")
  const logs = { memory: logLines(memory), quiet: logLines(quiet), embedded: logLines(embedded) }
  const served = (name: string) => rows.filter((row) => row.target === name).reduce((sum, row) => sum + row.requests, 0)
  say(`   service stdout log lines: memory ${logs.memory} (~${fmt(logs.memory / Math.max(1, served(memory.name)), 2)} per measured request),`)
  say(`   memory LOG_LEVEL=warn ${logs.quiet}, embedded ${logs.embedded}.`)
  output["http"] = { concurrency: CONCURRENCY, seconds: HTTP_SECONDS, rows, logLines: logs }

  await stopChild(quiet.child)
  await stopChild(embedded.child)
  const code = await waitExit(embedded.child)
  if (code !== 0) note(`embedded service exited with ${code} on SIGTERM: ${embedded.stderr().trim().slice(-500)}`)
}

// ---------------------------------------------------------------------------------------
// 3. Memory

const memorySection = async () => {
  say("\n== 3. Memory: heap retained by 100,000 pets (separate --expose-gc process per structure) ==")
  const count = 100_000
  const kinds: ReadonlyArray<MemoryKind> = ["plainMap", "plainIndexed", "adapter"]
  const results: Array<MemoryResult> = []
  for (const kind of kinds) {
    const resultPath = resultFile(`memory-${kind}`)
    const run = await runNodeChild<MemoryResult>({
      script: "memory.ts",
      arg: { kind, count, resultPath },
      resultPath,
      timeoutMs: 60_000,
      nodeArgs: ["--expose-gc"]
    })
    if (run.result === undefined) note(`memory/${kind} produced no result (exit ${run.exit}): ${run.stderr.trim().slice(-500)}`)
    else results.push(run.result)
  }
  const reference = results.find((r) => r.kind === "plainMap")
  const label: Record<MemoryKind, string> = {
    plainMap: "reference: Map<bigint, plain object>",
    plainIndexed: "plain objects in the adapter's 3 indexes",
    adapter: "memory adapter (Pet instances + indexes)"
  }
  say("")
  say(table(
    ["structure", "pets", "heap MB", "bytes/pet", "cost x ref", "build ms"],
    results.map((r) => [
      label[r.kind],
      String(r.count),
      fmt(r.heapUsedBytes / 1024 / 1024),
      fmt(r.bytesPerPet),
      reference === undefined ? "" : fmtRatio(r.heapUsedBytes / reference.heapUsedBytes),
      fmt(r.buildMs)
    ])
  ))
  say("   heap MB = heapUsed after 4 forced GCs, minus the same before building; names (~10 chars) included.")
  output["memory"] = results
}

// ---------------------------------------------------------------------------------------
// 4. Hostile input

const HOSTILE_BODIES: ReadonlyArray<{ readonly body: BodyName; readonly label: string; readonly n: number; readonly expect: number }> = [
  { body: "small", label: "small valid create (~50 B)", n: 400, expect: 201 },
  { body: "longName60k", label: "60 KiB: 61k-char name", n: 150, expect: 400 },
  { body: "malformed60k", label: "60 KiB: unterminated JSON", n: 150, expect: 400 },
  { body: "manyInts60k", label: "60 KiB: ~8.6k integers, bad field", n: 150, expect: 400 },
  { body: "deepNesting60k", label: "60 KiB: arrays nested 30k deep", n: 150, expect: 400 },
  { body: "huge1m", label: "1 MiB body", n: 100, expect: 413 }
]

const hostileSection = async () => {
  say("\n== 4. Hostile input (one connection, sequential requests; memory store) ==")
  const service = sharedMemoryService ?? await startService("service memory", { STORE: "memory" })
  const reference = sharedReference ?? await startReference()
  const targets = [service, reference]
  interface BodyRow {
    readonly target: string
    readonly body: BodyName
    readonly label: string
    readonly expect: number
    readonly requests: number
    readonly statuses: string
    readonly p50: number
    readonly p99: number
    readonly serverCpuUsPerRequest: number | undefined
  }
  const rows: Array<BodyRow> = []
  for (const target of targets) {
    for (const spec of HOSTILE_BODIES) {
      const run = await runLoad(target, `hostile-${target.name}-${spec.body}`, {
        method: "POST",
        path: "/v1/pets",
        body: spec.body,
        headers: { authorization: `Bearer ${API_KEY}` },
        concurrency: 1,
        durationMs: 20_000,
        warmupMs: 0,
        maxRequests: spec.n,
        warmupRequests: Math.ceil(spec.n / 10),
        timeoutMs: 5_000
      })
      rows.push({
        target: target.name,
        body: spec.body,
        label: spec.label,
        expect: spec.expect,
        requests: run.result.requests,
        statuses: statusSummary(run.result),
        p50: run.result.latencyMs.p50,
        p99: run.result.latencyMs.p99,
        serverCpuUsPerRequest: run.serverCpuUsPerRequest
      })
    }
  }
  const find = (target: string, body: BodyName) => rows.find((row) => row.target === target && row.body === body)
  say("")
  say(table(
    ["target", "body", "expected", "got", "p50 ms", "p99 ms", "srv CPU us/req", "p50 x small create", "p50 x ref (same body)", "CPU/req x ref"],
    rows.map((row) => {
      const small = find(row.target, "small")
      const ref = find(reference.name, row.body)
      return [
        row.target,
        row.label,
        String(row.expect),
        row.statuses,
        fmt(row.p50),
        fmt(row.p99),
        fmt(row.serverCpuUsPerRequest),
        small === undefined || row.body === "small" ? "" : fmtRatio(row.p50 / small.p50),
        ref === undefined || row.target === reference.name ? "" : fmtRatio(row.p50 / ref.p50),
        ref === undefined || row.target === reference.name || row.serverCpuUsPerRequest === undefined ||
          ref.serverCpuUsPerRequest === undefined
          ? ""
          : fmtRatio(row.serverCpuUsPerRequest / ref.serverCpuUsPerRequest)
      ]
    })
  ))
  say("   got = status x count (or client error x count: a 413 sent before the 1 MiB upload finishes may")
  say("   surface as EPIPE/ECONNRESET). srv CPU us/req is coarse for these small counts (10 ms ticks).")

  // Flood: /healthz probed from its own process while another process sends 1 MiB bodies.
  interface FloodRow {
    readonly target: string
    readonly phase: string
    readonly probes: number
    readonly p50: number
    readonly p99: number
    readonly max: number
    readonly failures: string
    readonly flood: string
  }
  const floodRows: Array<FloodRow> = []
  for (const target of targets) {
    const probeSpec: LoadSpec = {
      method: "GET",
      path: "/healthz",
      concurrency: 1,
      intervalMs: 10,
      durationMs: 3_000,
      warmupMs: 300,
      timeoutMs: 2_000,
      noKeepAlive: false
    }
    const idle = await runLoad(target, `probe-idle-${target.name}`, probeSpec)
    floodRows.push({
      target: target.name,
      phase: "idle",
      probes: idle.result.requests,
      p50: idle.result.latencyMs.p50,
      p99: idle.result.latencyMs.p99,
      max: idle.result.latencyMs.max,
      failures: nonOk(idle.result, (status) => status === 200),
      flood: ""
    })
    const [flood, probe] = await Promise.all([
      runLoad(target, `flood-${target.name}`, {
        method: "POST",
        path: "/v1/pets",
        body: "huge1m",
        headers: { authorization: `Bearer ${API_KEY}` },
        concurrency: 8,
        durationMs: 4_000,
        warmupMs: 300,
        timeoutMs: 5_000
      }),
      runLoad(target, `probe-flood-${target.name}`, { ...probeSpec, durationMs: 3_500, warmupMs: 500 })
    ])
    floodRows.push({
      target: target.name,
      phase: "during 1 MiB flood (8 conns)",
      probes: probe.result.requests,
      p50: probe.result.latencyMs.p50,
      p99: probe.result.latencyMs.p99,
      max: probe.result.latencyMs.max,
      failures: nonOk(probe.result, (status) => status === 200),
      flood: `${fmt(flood.result.rps)} req/s: ${statusSummary(flood.result)}`
    })
  }
  const idleOf = (target: string) => floodRows.find((row) => row.target === target && row.phase === "idle")
  say("")
  say(table(
    ["target", "/healthz probe (every 10 ms)", "probes", "p50 ms", "p99 ms", "max ms", "failed", "p99 x idle", "flood outcome"],
    floodRows.map((row) => {
      const idle = idleOf(row.target)
      return [
        row.target,
        row.phase,
        String(row.probes),
        fmt(row.p50),
        fmt(row.p99),
        fmt(row.max),
        row.failures,
        row.phase === "idle" || idle === undefined ? "" : fmtRatio(row.p99 / idle.p99),
        row.flood
      ]
    })
  ))
  say("   Three processes (server, flooder, prober) share 2 cores here, so part of any slowdown is scheduling.")
  output["hostile"] = { bodies: rows, flood: floodRows }
}

// ---------------------------------------------------------------------------------------

const gitRevision = (): string | undefined => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim()
  } catch {
    return undefined
  }
}

const main = async () => {
  const started = Date.now()
  const loadBefore = loadavg()
  say(`Animal Store benchmarks - node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}),`)
  say(`load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")}. Ratios compare against references measured in this run.`)
  const errors: Record<string, string> = {}
  const sectionSeconds: Record<string, number> = {}
  const sections: ReadonlyArray<readonly [string, () => Promise<void>]> = [
    ["repo", repositorySection],
    ["http", httpSection],
    ["memory", memorySection],
    ["hostile", hostileSection]
  ]
  try {
    for (const [name, run] of sections) {
      if (!SECTIONS.has(name)) continue
      const sectionStarted = Date.now()
      try {
        await run()
        sectionSeconds[name] = (Date.now() - sectionStarted) / 1000
        say(`   (${name}: ${sectionSeconds[name].toFixed(0)} s)`)
      } catch (error) {
        errors[name] = error instanceof Error ? error.message : String(error)
        say(`\n!! section ${name} failed: ${errors[name]}`)
      }
    }
  } finally {
    await cleanup()
  }
  const elapsed = (Date.now() - started) / 1000
  const results = {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      loadavgBefore: loadBefore,
      loadavgAfter: loadavg(),
      git: gitRevision(),
      elapsedSeconds: elapsed,
      sectionSeconds,
      sections: [...SECTIONS]
    },
    ...output,
    notes,
    errors
  }
  const dir = join(BENCH_DIR, "results")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "latest.json"), JSON.stringify(results, null, 2) + "\n")
  say(`\nDone in ${elapsed.toFixed(0)} s; load average now ${loadavg().map((l) => l.toFixed(2)).join(" ")}.`)
  say(`Results written to bench/results/latest.json`)
  if (Object.keys(errors).length > 0) process.exitCode = 1
}

void main()
