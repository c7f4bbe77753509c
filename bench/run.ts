/**
 * `npm run bench`: the Animal Store benchmark suite.
 *
 * Every figure is reported next to a reference or a peer measured in the same run on the
 * same machine, as a ratio. There are no absolute thresholds and nothing here fails on a
 * slow result; this is not part of `npm test`.
 *
 * Sections:
 *   repo     PetRepository adapters vs plain JS / raw SQL through the same client
 *   http     side by side over HTTP (autocannon, 50 connections, 10,000 pets in each server):
 *            Animal Store (memory, embedded, postgres) vs the bare node:http reference (the
 *            ceiling), Fastify 5 peers (bare, and with Animal Store's features: the fair
 *            peer) and the Effect floor on a Map and on PostgreSQL (bench/peers/), with
 *            issue 21's targets; then Animal Store's spawn-to-first-200 per store
 *   scale    PostgreSQL keyset paging through the HTTP API with 10^3 and 10^6 pets: first
 *            page vs a page 90% deep, unfiltered and by status
 *   inventory
 *            the inventory vs a get by id, at 1,000 and 200,000 pets, per store (memory,
 *            embedded, postgres): it should cost about a get at any size
 *   memory   heap per 100k pets: memory adapter vs a plain Map
 *   hostile  cost of rejecting large/invalid bodies; /healthz latency under a 1 MiB flood
 *   sse      Server-Sent Events on one instance: 1,000 subscribers and the RSS they add (target
 *            < 100 MB); creates/s with 1,000 open streams that read every event against none
 *            (memory, postgres; target >= 0.5x), server CPU per create in both; 200 streams that
 *            never read on a 200,000-event log (postgres, embedded; from event 0, and from its
 *            end): RSS per stream against its bound, the kernel's TCP memory, list p50/p99 without
 *            and with them (target p99 <= 2x). About 10-15 minutes on 2 shared cores
 *   outbox   issue 23's target (at most 15% slower): create + place + approve by 10 concurrent
 *            clients on PostgreSQL and embedded, the adapters' statements with and without the
 *            event insert (and the sequencer's wake), interleaved, with one subscription row;
 *            diagnostic variants without the wake and with the numbering at COMMIT of before
 *            the sequencer, the repositories themselves, and on PostgreSQL what the backends
 *            waited on
 *   webhooks create + place + approve over HTTP on PostgreSQL and embedded, without and with one
 *            webhook subscription (a local receiver answering 204): what the dispatcher costs the
 *            writes (both rounds write the outbox); idle CPU with 100 caught-up subscriptions
 *            against none (target within 2x); 1,000 subscriptions and 20 creates: the time until
 *            every subscription has every event, deliveries/s, first delivery by rank. About 5 minutes
 *   uploads  a 3 MB, 12-megapixel JPEG uploaded as a pet's photo on PostgreSQL and embedded: the
 *            upload's time and server CPU, the list's p99 beside two uploading clients against
 *            alone (target <= 2x), peak RSS with 4 uploads at once (bound 250 MB); about 2 minutes
 *   search   200,000 pets on PostgreSQL and embedded: the repository's get against a name search
 *            (pg_trgm) and a tag page, one call at a time; target: a search within 5x a get
 *   allocations
 *            bytes allocated and promoted per request from V8's GC trace (counts of the code's
 *            own doing, steady under load): Animal Store on memory and PostgreSQL against the
 *            Effect floor on a Map and on sql-pg, for a list, a get and a create, split into
 *            driver, features and Animal Store's SQL adapter; about 2 minutes
 *   instructions
 *            instructions per request under valgrind's callgrind (repeatable within about 5%,
 *            unlike req/s on shared cores): Animal Store on memory and PostgreSQL vs the
 *            Effect floor, Fastify + features (Map and pg), bare Fastify and the reference,
 *            for a list and a create, split into framework, features and store (and per
 *            feature: log, rate limit, metrics, when BENCH_INSTRUCTIONS_SERVERS names the
 *            servers with one off); about 8 minutes, so not in --quick unless --sections
 *            names it; left out without valgrind
 *
 * Flags (npm run bench -- <flags>):
 *   --quick          http and scale only; a 0.5 s warm-up per scenario and server, then
 *                    2 passes of 0.25 s warm-up + 1.5 s; 1 start-up sample; 2 rounds per
 *                    scale page (the 10^6 table stays: generate_series fills it in 5-10 s):
 *                    4-5 minutes. The full run: all sections, a 2 s warm-up, 4 passes of
 *                    1 s + 3 s, 3 start-up samples, 3 rounds per scale page: about 15 minutes.
 *   --sections=a,b   run these sections (default: all; with --quick: http,scale)
 *   --passes=N       HTTP passes per scenario and server
 *   --seconds=N      measured seconds per HTTP run
 * Environment: BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres; must be
 * 127.0.0.1): the server where throwaway databases are created and dropped.
 * BENCH_RATE_LIMIT (default 100000000/1s, a quota no run reaches, so the limiter runs on
 * every request; "off" to measure without it): Animal Store's RATE_LIMIT.
 * BENCH_INSTRUCTIONS_SERVERS (comma-separated kinds, e.g. animal-store,animal-store-postgres):
 * the instructions section counts only these servers; it alone can name the kinds with one
 * feature off (animal-store-no-log, -no-ratelimit, -no-metrics and fastify-features-no-log,
 * -no-ratelimit, -no-metrics), for the per-feature split. BENCH_INSTRUCTIONS_REQUESTS: requests counted per
 * scenario and server (default 3,000). BENCH_INSTRUCTIONS_SCENARIOS (list,create):
 * only these scenarios.
 *
 * Results: printed tables, bench/results/latest.json and bench/results/latest.md.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import type { BodyName } from "./bodies.ts"
import { httpSection } from "./http.ts"
import { allocationsSection } from "./allocations.ts"
import { uploadsSection } from "./uploads.ts"
import { instructionsSection } from "./instructions.ts"
import type { InventoryArgs, InventoryResult, InventoryRow } from "./inventory.ts"
import {
  BENCH_DIR,
  cpuMillisOf,
  fmt,
  fmtRatio,
  killAllSync,
  ROOT,
  runNodeChild,
  stopAll,
  stopChild
} from "./lib.ts"
import type { LoadArgs, LoadResult } from "./loadgen.ts"
import type { MemoryKind, MemoryResult } from "./memory.ts"
import type { OutboxArgs, OutboxResult, OutboxRow } from "./outbox.ts"
import { checkPgServer, createDatabase, dropDatabase } from "./pg-admin.ts"
import { makeReport } from "./report.ts"
import type { RepositoryArgs, RepositoryResult, RepositoryRow } from "./repository.ts"
import { scaleSection } from "./scale.ts"
import { searchSection } from "./search.ts"
import { sseSection } from "./sse.ts"
import { webhooksSection } from "./webhooks.ts"
import { type Server, startReference, startService } from "./servers.ts"

if (Number(process.versions.node.split(".")[0]) < 24) {
  console.error(`bench needs Node 24 (this is ${process.version}); run node_modules/.bin/node bench/run.ts`)
  process.exit(1)
}

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    sections: { type: "string" },
    passes: { type: "string" },
    seconds: { type: "string" }
  }
})
const QUICK = flags.quick
const ALL_SECTIONS = ["repo", "http", "scale", "inventory", "memory", "hostile", "sse", "outbox", "webhooks", "uploads", "search", "allocations", "instructions"]
const SECTIONS = new Set((flags.sections ?? (QUICK ? "http,scale" : ALL_SECTIONS.join(","))).split(",").map((s) => s.trim()))
for (const name of SECTIONS) {
  if (!ALL_SECTIONS.includes(name)) {
    console.error(`unknown section ${name}; sections: ${ALL_SECTIONS.join(", ")}`)
    process.exit(2)
  }
}
const positive = (text: string | undefined, fallback: number): number => {
  const value = Number(text ?? fallback)
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`expected a positive number, got ${text}`)
    process.exit(2)
  }
  return value
}
const HTTP = {
  passes: Math.round(positive(flags.passes, QUICK ? 2 : 4)),
  seconds: positive(flags.seconds, QUICK ? 1.5 : 3),
  warmupSeconds: QUICK ? 0.25 : 1,
  warmupPassSeconds: QUICK ? 0.5 : 2,
  startupSamples: QUICK ? 1 : 3
}
const SCALE = {
  sizes: [1_000, 1_000_000],
  rounds: QUICK ? 2 : 3,
  seconds: QUICK ? 0.75 : 2,
  warmupSeconds: QUICK ? 0.25 : 0.5
}
const INVENTORY = {
  sizes: [1_000, 200_000],
  calls: QUICK ? 1_000 : 2_000,
  budgetMs: QUICK ? 3_000 : 6_000
}
// Short rounds and many of them: the median of per-round ratios shrugs off the bursts of
// other work on shared cores better than a few long rounds did.
const OUTBOX = {
  clients: 10,
  seconds: QUICK ? 1 : 1.5,
  rounds: QUICK ? 4 : 8
}
const PG_URL = process.env["BENCH_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const API_KEY = "bench-key-0123456789abcdef"

const work = mkdtempSync(join(tmpdir(), "animal-store-bench-"))
let resultCounter = 0
const resultFile = (label: string) => join(work, `${++resultCounter}-${label.replace(/[^a-z0-9]+/gi, "_")}.json`)

const output: Record<string, unknown> = {}
const report = makeReport("Animal Store benchmarks")
const say = report.say
const note = report.note

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

/** The PostgreSQL server's admin URL when it can be used, after saying why not otherwise. */
const usablePgUrl = async (section: string): Promise<string | undefined> => {
  const check = await checkPgServer(PG_URL)
  if (check.ok) return PG_URL
  note(`${section}: PostgreSQL left out: ${check.why}`)
  return undefined
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

// ---------------------------------------------------------------------------------------
// 1. Repository throughput

const repositorySection = async () => {
  report.heading("Repository throughput (sequential calls, one process; reference in the same process)")
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

  const pgUrl = await usablePgUrl("repo")
  if (pgUrl === undefined) skipped.push("postgres")
  else {
    const database = `animal_store_bench_${process.pid}_${Date.now().toString(36)}`
    try {
      await runAdapter({
        adapter: "postgres",
        creates: 2_000,
        gets: 3_000,
        pages: 1_000,
        budgetMs: 5_000,
        adminUrl: pgUrl,
        database
      }, 90_000)
    } finally {
      // The child drops its database itself; this catches a child that was killed.
      await dropDatabase(pgUrl, database)
    }
  }

  report.table(
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
  )
  say("   cost x ref = median over 10 interleaved rounds (ABBA order) of adapter time / reference time; 1.0x = no")
  say("   overhead. round spread = min-max of those per-round ratios: wide means a noisy run. op/s are totals.")
  say("   * = reference measured for under 20 ms in total: an order of magnitude only.")
  output["repository"] = { rows, skipped, setupMs: Object.fromEntries(results.map((r) => [r.adapter, r.setupMs])) }
}

// ---------------------------------------------------------------------------------------
// 2. HTTP side by side (http.ts) and 3. keyset paging at scale (scale.ts)

const httpSectionRun = async () => {
  output["http"] = await httpSection({ report, work, apiKey: API_KEY, pgUrl: await usablePgUrl("http"), ...HTTP })
}

const sseSectionRun = async () => {
  output["sse"] = await sseSection({ report, work, apiKey: API_KEY, pgUrl: await usablePgUrl("sse") })
}

const webhooksSectionRun = async () => {
  output["webhooks"] = await webhooksSection({ report, work, apiKey: API_KEY, pgUrl: await usablePgUrl("webhooks") })
}

const scaleSectionRun = async () => {
  const pgUrl = await usablePgUrl("scale")
  if (pgUrl === undefined) return
  output["scale"] = await scaleSection({ report, work, apiKey: API_KEY, pgUrl, ...SCALE })
}

// ---------------------------------------------------------------------------------------
// 3b. The inventory against a get, as the catalogue grows (inventory.ts)

const inventorySection = async () => {
  const sizes = INVENTORY.sizes.map((size) => size.toLocaleString("en-US")).join(" and ")
  report.heading(`Inventory vs get by id (${sizes} pets, sequential calls, one process per store)`)
  const rows: Array<InventoryRow> = []
  const run = async (args: Omit<InventoryArgs, "resultPath" | "sizes" | "calls" | "budgetMs">) => {
    const resultPath = resultFile(`inventory-${args.adapter}`)
    say(`   running ${args.adapter} ...`)
    const child = await runNodeChild<InventoryResult>({
      script: "inventory.ts",
      arg: { ...args, ...INVENTORY, resultPath } satisfies InventoryArgs,
      resultPath,
      timeoutMs: 300_000
    })
    if (child.result === undefined) {
      const why = child.timedOut ? "timed out" : `exit ${child.exit}`
      note(`inventory/${args.adapter} produced no result (${why}): ${child.stderr.trim().split("\n").slice(-5).join(" | ")}`)
    } else rows.push(...child.result.rows)
  }
  await run({ adapter: "memory" })
  await run({ adapter: "embedded", dataDir: join(work, "inventory-pglite") })
  const pgUrl = await usablePgUrl("inventory")
  if (pgUrl !== undefined) {
    const db = await createDatabase(pgUrl, "inventory")
    try {
      await run({ adapter: "postgres", url: db.url })
    } finally {
      await dropDatabase(pgUrl, db.name)
    }
  }
  const smallest = Math.min(...INVENTORY.sizes)
  report.table(
    ["store", "pets", "inventory op/s", "get op/s", "inventory / get", "round spread", "rounds", `ratio / ${smallest.toLocaleString("en-US")}-pet ratio`],
    rows.map((row) => {
      const small = rows.find((other) => other.adapter === row.adapter && other.pets === smallest)
      return [
        row.adapter,
        row.pets.toLocaleString("en-US"),
        fmt(row.subjectOpsPerSec),
        fmt(row.referenceOpsPerSec),
        fmtRatio(row.ratio),
        `${fmt(row.ratioMin, 2)}-${fmt(row.ratioMax, 2)}`,
        String(row.rounds),
        row.pets !== smallest && small !== undefined ? fmtRatio(row.ratio / small.ratio) : ""
      ]
    })
  )
  say("   inventory / get = median over interleaved rounds (ABBA) of inventory time / get time for the same number")
  say("   of calls; the last column is how much that ratio grew with the catalogue (1.0x: not at all).")
  output["inventory"] = { ...INVENTORY, rows }
}

// ---------------------------------------------------------------------------------------
// 3c. What the outbox write costs the changes (outbox.ts)

const outboxSection = async () => {
  report.heading(
    `Outbox write: create + place + approve, ${OUTBOX.clients} concurrent clients, the same statements without and with the event`
  )
  const rows: Array<OutboxRow> = []
  const events: Array<string> = []
  const run = async (args: Omit<OutboxArgs, "resultPath" | "clients" | "seconds" | "rounds">) => {
    const resultPath = resultFile(`outbox-${args.store}`)
    say(`   running ${args.store} ...`)
    const child = await runNodeChild<OutboxResult>({
      script: "outbox.ts",
      arg: { ...args, ...OUTBOX, resultPath } satisfies OutboxArgs,
      resultPath,
      timeoutMs: 300_000
    })
    if (child.result === undefined) {
      const why = child.timedOut ? "timed out" : `exit ${child.exit}`
      note(`outbox/${args.store} produced no result (${why}): ${child.stderr.trim().split("\n").slice(-5).join(" | ")}`)
      return
    }
    rows.push(...child.result.rows)
    events.push(`${args.store} ${child.result.events} (${child.result.unnumbered} unnumbered)`)
  }
  const pgUrl = await usablePgUrl("outbox")
  if (pgUrl !== undefined) {
    const db = await createDatabase(pgUrl, "outbox")
    try {
      await run({ store: "postgres", url: db.url })
    } finally {
      await dropDatabase(pgUrl, db.name)
    }
  }
  await run({ store: "embedded", dataDir: join(work, "outbox-pglite") })
  const topWaits = (waits: OutboxRow["waits"]) =>
    waits === undefined ? "" : Object.entries(waits)
      .sort(([, a], [, b]) => b - a)
      .slice(0, 3)
      .map(([wait, share]) => `${wait} ${Math.round(share * 100)}%`)
      .join(", ")
  report.table(
    ["store", "variant", "iterations/s", "x without (with: target >= 0.87)", "round spread", "create ms", "place ms", "approve ms", "CPU µs/iteration: server + bench", "backends' samples (PostgreSQL)"],
    rows.map((row) => [
      row.store,
      row.variant,
      fmt(row.perSec),
      row.variant === "without" ? "" : fmtRatio(row.ratio),
      row.variant === "without" ? "" : `${fmt(row.ratioMin, 2)}-${fmt(row.ratioMax, 2)}`,
      fmt(row.createMs),
      fmt(row.placeMs),
      fmt(row.approveMs),
      row.databaseCpuUs === undefined ? `${fmt(row.processCpuUs)} (one process)` : `${fmt(row.databaseCpuUs)} + ${fmt(row.processCpuUs)}`,
      topWaits(row.waits)
    ])
  )
  say(`   an iteration = create a pet, place an order for it, approve the order: 3 changes, each in its own transaction,`)
  say(`   3 events with the outbox. ${OUTBOX.clients} fibers on the service's client (PostgreSQL: a pool of 10; embedded: one`)
  say("   multiplexed connection), one webhook subscription row, no dispatcher (it reads the feed outside the writes'")
  say("   transactions; the webhooks section measures it). without / with: the adapters' statements sent directly, without")
  say("   and with the event insert + the EventSequencer's wake after commit (it numbers the events meanwhile); diagnostics:")
  say("   with, no wake (its 1 s backstop numbers); numbered at COMMIT (0010): the mechanism before the sequencer (a trigger")
  say("   under an advisory lock + pg_notify in each writer), into a copy of events; repository: PetRepositorySql +")
  say("   OrderRepositorySql.")
  say(`   x without = median over ${OUTBOX.rounds} interleaved rounds of ${OUTBOX.seconds} s (order reversed every other round) of iterations/s`)
  say("   / without's in the same round; ms = mean latency per action. Backends' samples: pg_stat_activity every 20 ms,")
  say("   the pool's backends by state: wait (Lock/advisory = the numbering lock, Lock/object = NOTIFY's commit lock,")
  say("   ClientRead = waiting for this process). CPU: PostgreSQL's processes (all of this machine's) + the bench process")
  say("   (its SQL client and the sequencer); embedded: the one process, PGlite included.")
  say(`   events written: ${events.join("; ")}.`)
  output["outbox"] = { ...OUTBOX, rows }
}

const uploadsSectionRun = async () => {
  output["uploads"] = await uploadsSection({ report, work, apiKey: API_KEY, pgUrl: await usablePgUrl("uploads") })
}

const searchSectionRun = async () => {
  output["search"] = await searchSection({ report, work, pgUrl: await usablePgUrl("search") })
}

const allocationsSectionRun = async () => {
  output["allocations"] = await allocationsSection({
    report,
    work,
    apiKey: API_KEY,
    pgUrl: await usablePgUrl("allocations"),
    scenarios: ["list", "getById", "create"],
    requests: 20_000
  })
}

const instructionsSectionRun = async () => {
  output["instructions"] = await instructionsSection({
    report,
    work,
    apiKey: API_KEY,
    pgUrl: await usablePgUrl("instructions"),
    scenarios: (process.env["BENCH_INSTRUCTIONS_SCENARIOS"]?.split(",") ?? ["list", "create"]) as Array<"list" | "create">,
    requests: Number(process.env["BENCH_INSTRUCTIONS_REQUESTS"] ?? 3_000),
    // Past V8's tiering: after 2,000 the counts still carried compile work (Animal Store's
    // list 910k after 2,000, 519k after 10,000; Fastify's create 232k and 171k).
    warmupRequests: 10_000
  })
}

// ---------------------------------------------------------------------------------------
// 4. Memory

const memorySection = async () => {
  report.heading("Memory: heap retained by 100,000 pets (separate --expose-gc process per structure)")
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
  report.table(
    ["structure", "pets", "heap MB", "bytes/pet", "cost x ref", "build ms"],
    results.map((r) => [
      label[r.kind],
      String(r.count),
      fmt(r.heapUsedBytes / 1024 / 1024),
      fmt(r.bytesPerPet),
      reference === undefined ? "" : fmtRatio(r.heapUsedBytes / reference.heapUsedBytes),
      fmt(r.buildMs)
    ])
  )
  say("   heap MB = heapUsed after 4 forced GCs, minus the same before building; names (~10 chars) included.")
  output["memory"] = results
}

// ---------------------------------------------------------------------------------------
// 5. Hostile input

const HOSTILE_BODIES: ReadonlyArray<{ readonly body: BodyName; readonly label: string; readonly n: number; readonly expect: number }> = [
  { body: "small", label: "small valid create (~50 B)", n: 400, expect: 201 },
  { body: "longName4k", label: "4 KiB: 4k-char name", n: 300, expect: 400 },
  { body: "malformed4k", label: "4 KiB: unterminated JSON", n: 300, expect: 400 },
  { body: "manyInts4k", label: "4 KiB: ~570 integers, bad field", n: 300, expect: 400 },
  { body: "deepNesting4k", label: "4 KiB: arrays nested 2k deep", n: 300, expect: 400 },
  { body: "huge1m", label: "1 MiB body", n: 100, expect: 413 }
]

const hostileSection = async () => {
  report.heading("Hostile input (one connection, sequential requests; memory store)")
  const service = await startService({ name: "service memory", work, apiKey: API_KEY, env: { STORE: "memory" } })
  const reference = await startReference(API_KEY)
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
  report.table(
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
  )
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
  report.table(
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
  )
  say("   Three processes (server, flooder, prober) share 2 cores here, so part of any slowdown is scheduling.")
  output["hostile"] = { bodies: rows, flood: floodRows }
  await stopChild(service.child)
  await stopChild(reference.child)
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
  say(`Animal Store benchmarks${QUICK ? " (--quick)" : ""} - node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}),`)
  say(`load average ${loadBefore.map((l) => l.toFixed(2)).join(" ")}. Ratios compare against references measured in this run.`)
  say(`Sections: ${[...SECTIONS].join(", ")}${QUICK ? " (--quick leaves out the others unless --sections names them)" : ""}.`)
  const errors: Record<string, string> = {}
  const sectionSeconds: Record<string, number> = {}
  const sections: ReadonlyArray<readonly [string, () => Promise<void>]> = [
    ["repo", repositorySection],
    ["http", httpSectionRun],
    ["scale", scaleSectionRun],
    ["inventory", inventorySection],
    ["memory", memorySection],
    ["hostile", hostileSection],
    ["sse", sseSectionRun],
    ["outbox", outboxSection],
    ["webhooks", webhooksSectionRun],
    ["uploads", uploadsSectionRun],
    ["search", searchSectionRun],
    ["allocations", allocationsSectionRun],
    ["instructions", instructionsSectionRun]
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
        report.say(`\n!! section ${name} failed: ${errors[name]}`)
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
      sections: [...SECTIONS],
      quick: QUICK,
      http: HTTP,
      scale: SCALE,
      inventory: INVENTORY
    },
    ...output,
    notes: report.notes(),
    errors
  }
  say(`\nDone in ${elapsed.toFixed(0)} s; load average now ${loadavg().map((l) => l.toFixed(2)).join(" ")}.`)
  const dir = join(BENCH_DIR, "results")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "latest.json"), JSON.stringify(results, null, 2) + "\n")
  writeFileSync(join(dir, "latest.md"), report.markdown())
  process.stdout.write("Results written to bench/results/latest.json and bench/results/latest.md\n")
  if (Object.keys(errors).length > 0) process.exitCode = 1
}

void main()
