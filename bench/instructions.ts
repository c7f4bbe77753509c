/**
 * Instructions per request, counted by valgrind's callgrind. Requests per second and CPU
 * time on two shared cores moved by a factor of two between runs of the same code; an
 * instruction count moves by about 5% (the Effect floor's by up to 15%), whatever else the
 * machine does. So it shows what each server's own code costs per request, and changes
 * that runs over HTTP cannot resolve.
 *
 * Each server runs under callgrind with counting off. After seeding and a warm-up,
 * counting is switched on (`callgrind_control -i on`) for a fixed number of requests of
 * one scenario and off again, and the count is read from callgrind's dump. Every thread
 * of the process is counted (V8's compiler and GC helpers too); PostgreSQL's own
 * processes are not. Servers: Animal Store on memory and on PostgreSQL (as `npm start`
 * runs it), the Effect floor on a Map, Fastify with Animal Store's features on a Map and
 * on PostgreSQL, bare Fastify on a Map and the bare node:http reference.
 *
 * Then the cost per request is split into layers, Animal Store's beside the Fastify peer's:
 * the framework over bare node:http (the Effect floor; bare Fastify), the features over the
 * framework (Animal Store memory over the floor; Fastify + features over bare Fastify: issue
 * 21's target is that the first is no larger), and the store (PostgreSQL over memory).
 *
 * Per feature, when BENCH_INSTRUCTIONS_SERVERS names them (they are not counted by default):
 * Animal Store memory with one feature off (animal-store-no-log: LOG_LEVEL=none;
 * animal-store-no-ratelimit: RATE_LIMIT=off; animal-store-no-metrics: METRICS=off) and
 * Fastify + features + Map with the same one left out (fastify-features-no-log,
 * fastify-features-no-ratelimit, fastify-features-no-metrics: peers/fastify-server.ts's
 * `off`). A feature's cost is the server with everything on less the one without it; the
 * rest of the features is the features layer less the three (with the floor and bare Fastify).
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { not2xx, seededFixedRuns, startLoadGenerator } from "./cannon-client.ts"
import { fmt, fmtRatio, HOST, sleep, stopChild } from "./lib.ts"
import { createDatabase, dropDatabase } from "./pg-admin.ts"
import type { Report } from "./report.ts"
import type { ScenarioName } from "./scenarios.ts"
import {
  type Server,
  startEffect,
  startFastify,
  startFastifyFeatures,
  startReference,
  startService,
  type Wrapper
} from "./servers.ts"

export interface InstructionsOptions {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  readonly scenarios: ReadonlyArray<ScenarioName>
  /** Requests counted per scenario and server. */
  readonly requests: number
  /** Requests sent before counting, per scenario and server. */
  readonly warmupRequests: number
  /** Admin URL of the local PostgreSQL server, or undefined to leave out the PostgreSQL servers. */
  readonly pgUrl: string | undefined
}

const PETS = 1_000
const CONNECTIONS = 10
/** Under valgrind a server starts and answers some 20-50 times slower. */
const START_TIMEOUT_MS = 300_000

const hasCommand = (command: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

type Kind =
  | "animal-store"
  | "animal-store-postgres"
  | "effect-floor"
  | "fastify-features"
  | "fastify-features-pg"
  | "fastify"
  | "reference"
  | "animal-store-no-log"
  | "animal-store-no-ratelimit"
  | "animal-store-no-metrics"
  | "fastify-features-no-log"
  | "fastify-features-no-ratelimit"
  | "fastify-features-no-metrics"

const SERVERS: ReadonlyArray<{
  readonly kind: Kind
  readonly label: string
  readonly postgres: boolean
  /** For the per-feature split only: counted when BENCH_INSTRUCTIONS_SERVERS names it, never by default. */
  readonly onlyWhenNamed?: true
}> = [
  { kind: "animal-store", label: "Animal Store memory", postgres: false },
  { kind: "animal-store-postgres", label: "Animal Store postgres", postgres: true },
  { kind: "effect-floor", label: "Effect floor + Map", postgres: false },
  { kind: "fastify-features", label: "Fastify + features + Map", postgres: false },
  { kind: "fastify-features-pg", label: "Fastify + features + pg", postgres: true },
  { kind: "fastify", label: "bare Fastify + Map", postgres: false },
  { kind: "reference", label: "reference node:http", postgres: false },
  { kind: "animal-store-no-log", label: "Animal Store memory, no log", postgres: false, onlyWhenNamed: true },
  { kind: "animal-store-no-ratelimit", label: "Animal Store memory, no rate limit", postgres: false, onlyWhenNamed: true },
  { kind: "animal-store-no-metrics", label: "Animal Store memory, no metrics", postgres: false, onlyWhenNamed: true },
  { kind: "fastify-features-no-log", label: "Fastify + features + Map, no log", postgres: false, onlyWhenNamed: true },
  {
    kind: "fastify-features-no-ratelimit",
    label: "Fastify + features + Map, no rate limit",
    postgres: false,
    onlyWhenNamed: true
  },
  { kind: "fastify-features-no-metrics", label: "Fastify + features + Map, no metrics", postgres: false, onlyWhenNamed: true }
]

/**
 * The features both servers can switch off one at a time, and the server of each without
 * it: Animal Store by its setting, the Fastify peer by its `off` (peers/fastify-server.ts).
 */
const FEATURES: ReadonlyArray<{
  readonly feature: string
  readonly without: string
  readonly animalStore: Kind
  readonly fastify: Kind
}> = [
  { feature: "request log line", without: "no log", animalStore: "animal-store-no-log", fastify: "fastify-features-no-log" },
  {
    feature: "rate limit",
    without: "no rate limit",
    animalStore: "animal-store-no-ratelimit",
    fastify: "fastify-features-no-ratelimit"
  },
  { feature: "metrics", without: "no metrics", animalStore: "animal-store-no-metrics", fastify: "fastify-features-no-metrics" }
]

const LABEL: Record<Kind, string> = Object.fromEntries(SERVERS.map(({ kind, label }) => [kind, label])) as Record<Kind, string>

const start = (kind: Kind, options: InstructionsOptions, wrapper: Wrapper, databaseUrl: string | undefined): Promise<Server> => {
  const { apiKey, work } = options
  const timeoutMs = START_TIMEOUT_MS
  switch (kind) {
    case "animal-store":
      return startService({ name: "instructions-memory", work, apiKey, env: { STORE: "memory" }, wrapper, timeoutMs })
    case "animal-store-no-log":
      return startService({ name: `instructions-${kind}`, work, apiKey, env: { STORE: "memory", LOG_LEVEL: "none" }, wrapper, timeoutMs })
    case "animal-store-no-ratelimit":
      return startService({ name: `instructions-${kind}`, work, apiKey, env: { STORE: "memory", RATE_LIMIT: "off" }, wrapper, timeoutMs })
    case "animal-store-no-metrics":
      return startService({ name: `instructions-${kind}`, work, apiKey, env: { STORE: "memory", METRICS: "off" }, wrapper, timeoutMs })
    case "animal-store-postgres":
      return startService({
        name: "instructions-postgres",
        work,
        apiKey,
        // Under valgrind on a loaded machine the first connection can take longer than the default 5 s.
        env: { STORE: "postgres", DATABASE_URL: databaseUrl ?? "", DATABASE_CONNECT_TIMEOUT: "60 seconds" },
        wrapper,
        timeoutMs
      })
    case "effect-floor":
      return startEffect({ name: LABEL[kind], apiKey, store: "map", wrapper, timeoutMs })
    case "fastify-features":
      return startFastifyFeatures({ name: LABEL[kind], work, apiKey, store: "map", wrapper, timeoutMs })
    case "fastify-features-no-log":
      return startFastifyFeatures({ name: LABEL[kind], work, apiKey, store: "map", off: ["log"], wrapper, timeoutMs })
    case "fastify-features-no-ratelimit":
      return startFastifyFeatures({ name: LABEL[kind], work, apiKey, store: "map", off: ["rateLimit"], wrapper, timeoutMs })
    case "fastify-features-no-metrics":
      return startFastifyFeatures({ name: LABEL[kind], work, apiKey, store: "map", off: ["metrics"], wrapper, timeoutMs })
    case "fastify-features-pg":
      return startFastifyFeatures({ name: LABEL[kind], work, apiKey, store: "pg", databaseUrl: databaseUrl ?? "", wrapper, timeoutMs })
    case "fastify":
      return startFastify({ name: LABEL[kind], apiKey, store: "map", wrapper, timeoutMs })
    case "reference":
      return startReference(apiKey, wrapper, timeoutMs)
  }
}

/**
 * Callgrind's finished dumps of one server: the file named at start-up stays empty until
 * the process exits, and each `callgrind_control -d` adds one; a dump's last line is `totals:`.
 */
const dumpsOf = (directory: string, prefix: string): ReadonlyArray<string> =>
  readdirSync(directory)
    .filter((name) => name.startsWith(prefix))
    .map((name) => readFileSync(join(directory, name), "utf8"))
    .filter((text) => /^totals: \d+$/m.test(text))

/** The instructions callgrind counted while counting was on, over all its dumps of this run. */
const countedInstructions = (directory: string, prefix: string): number => {
  let total = 0
  for (const text of dumpsOf(directory, prefix)) {
    for (const match of text.matchAll(/^totals: (\d+)$/gm)) total += Number(match[1])
  }
  return total
}

/**
 * Valgrind names the pipes callgrind_control talks through after $HOST, which is also
 * Animal Store's listen address: every server here runs with HOST set to that, and so
 * does callgrind_control.
 */
const callgrindControl = (args: ReadonlyArray<string>) =>
  execFileSync("callgrind_control", args, { stdio: "ignore", env: { ...process.env, HOST } })

/** Asks callgrind for a dump and waits until it is written (a few hundred milliseconds). */
const dump = async (server: Server, directory: string, prefix: string): Promise<void> => {
  const before = dumpsOf(directory, prefix).length
  callgrindControl(["-d", String(server.child.pid)])
  for (let waited = 0; dumpsOf(directory, prefix).length === before; waited += 100) {
    if (waited > 60_000) throw new Error(`callgrind wrote no dump for ${prefix} within 60 s`)
    await sleep(100)
  }
}

export const instructionsSection = async (options: InstructionsOptions): Promise<Record<string, unknown>> => {
  const { report } = options
  report.heading(
    `Instructions per request (valgrind callgrind; ${options.requests.toLocaleString("en-US")} requests counted per scenario and server, after ${options.warmupRequests.toLocaleString("en-US")} not counted; ${CONNECTIONS} connections, ${PETS.toLocaleString("en-US")} pets)`
  )
  const missing = ["valgrind", "callgrind_control"].filter((command) => !hasCommand(command))
  if (missing.length > 0) {
    report.note(`instructions: left out: ${missing.join(" and ")} not found (Debian package valgrind)`)
    return { skipped: `${missing.join(", ")} not found` }
  }
  // BENCH_INSTRUCTIONS_SERVERS=animal-store,animal-store-postgres counts only those (a before/after of one change).
  const only = process.env["BENCH_INSTRUCTIONS_SERVERS"]?.split(",").map((kind) => kind.trim())
  const servers = SERVERS.filter((server) =>
    (!server.postgres || options.pgUrl !== undefined) &&
    (only === undefined ? server.onlyWhenNamed !== true : only.includes(server.kind))
  )
  if (options.pgUrl === undefined) report.note("instructions: the PostgreSQL servers left out: no usable PostgreSQL server")
  const counts: Partial<Record<Kind, Partial<Record<ScenarioName, number>>>> = {}
  const loader = startLoadGenerator()
  const databases: Array<string> = []
  try {
    for (const { kind, label, postgres } of servers) {
      const prefix = `callgrind-${kind}`
      const wrapper = [
        "env",
        `HOST=${HOST}`,
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        `--callgrind-out-file=${join(options.work, prefix)}.%p`
      ]
      const started = performance.now()
      let databaseUrl: string | undefined
      if (postgres && options.pgUrl !== undefined) {
        const db = await createDatabase(options.pgUrl, `instructions_${kind.replace(/-/g, "_")}`)
        databases.push(db.name)
        databaseUrl = db.url
      }
      const server = await start(kind, options, wrapper, databaseUrl)
      try {
        const load = await seededFixedRuns(loader, {
          label,
          port: server.port,
          apiKey: options.apiKey,
          connections: CONNECTIONS,
          pets: PETS
        })
        report.say(`   ${label}: serving and seeded under valgrind in ${fmt((performance.now() - started) / 1000)} s`)
        const pid = String(server.child.pid)
        const own: Partial<Record<ScenarioName, number>> = {}
        counts[kind] = own
        for (const scenario of options.scenarios) {
          await load(scenario, options.warmupRequests)
          const before = countedInstructions(options.work, prefix)
          callgrindControl(["-i", "on", pid])
          const result = await load(scenario, options.requests)
          callgrindControl(["-i", "off", pid])
          await dump(server, options.work, prefix)
          const bad = not2xx(result)
          if (bad > 0) report.note(`instructions: ${label} ${scenario}: ${bad} answers were not 2xx`)
          own[scenario] = (countedInstructions(options.work, prefix) - before) / result.requests
        }
      } finally {
        await stopChild(server.child, 30_000)
      }
    }
  } finally {
    await loader.stop()
    if (options.pgUrl !== undefined) for (const name of databases) await dropDatabase(options.pgUrl, name)
  }

  const count = (kind: Kind, scenario: ScenarioName) => counts[kind]?.[scenario]
  // A difference of two counts can come out below zero (the reference's list outdoes the floor's): no ratio then.
  const ratioOf = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || a < 0 || b <= 0 ? undefined : a / b
  const instructions = (value: number | undefined) => (value === undefined ? "-" : Math.round(value).toLocaleString("en-US"))
  /** The feature-equal peer on the same storage (with the same feature left out). */
  const peerOf = (kind: Kind): Kind =>
    FEATURES.find((row) => row.animalStore === kind)?.fastify ??
      (SERVERS.find((server) => server.kind === kind)?.postgres ? "fastify-features-pg" : "fastify-features")
  report.table(
    ["scenario", "server", "instructions/req", "vs Effect floor", "vs bare Fastify + Map", "vs Fastify + features (same store, same off)"],
    options.scenarios.flatMap((scenario) =>
      servers.map(({ kind, label }) => {
        const own = count(kind, scenario)
        return [
          scenario,
          label,
          instructions(own),
          fmtRatio(ratioOf(own, count("effect-floor", scenario))),
          fmtRatio(ratioOf(own, count("fastify", scenario))),
          fmtRatio(ratioOf(own, count(peerOf(kind), scenario)))
        ]
      })
    )
  )
  report.say(
    "   Ratios above 1x: the server executes more instructions per request. Counts repeated within about 5% from run to run (the Effect floor's within 15%);"
  )
  report.say("   they leave out time spent waiting (the kernel's socket work is not counted either) and PostgreSQL's own work.")

  const difference = (a: Kind, b: Kind, scenario: ScenarioName) => {
    const x = count(a, scenario)
    const y = count(b, scenario)
    return x === undefined || y === undefined ? undefined : x - y
  }
  // One side by side: what Animal Store's count is of, and the Fastify peer's.
  interface Comparison {
    readonly animalStore: string
    readonly animalStoreCount: number | undefined
    readonly fastify: string
    readonly fastifyCount: number | undefined
  }
  interface Layer extends Comparison {
    readonly layer: string
  }
  const comparisonTable = (what: string, rows: ReadonlyArray<readonly [ScenarioName, string, Comparison]>) =>
    report.table(
      ["scenario", what, "Animal Store", "instructions/req", "Fastify peer", "instructions/req", "AS / Fastify"],
      rows.map(([scenario, name, row]) => [
        scenario,
        name,
        row.animalStore,
        instructions(row.animalStoreCount),
        row.fastify,
        instructions(row.fastifyCount),
        fmtRatio(ratioOf(row.animalStoreCount, row.fastifyCount))
      ])
    )
  const layersOf = (scenario: ScenarioName): ReadonlyArray<Layer> => [
    {
      layer: "bare node:http",
      animalStore: "reference",
      animalStoreCount: count("reference", scenario),
      fastify: "reference",
      fastifyCount: count("reference", scenario)
    },
    {
      layer: "+ framework",
      animalStore: "Effect floor - reference",
      animalStoreCount: difference("effect-floor", "reference", scenario),
      fastify: "bare Fastify - reference",
      fastifyCount: difference("fastify", "reference", scenario)
    },
    {
      layer: "+ features",
      animalStore: "AS memory - Effect floor",
      animalStoreCount: difference("animal-store", "effect-floor", scenario),
      fastify: "Fastify + features - bare Fastify",
      fastifyCount: difference("fastify-features", "fastify", scenario)
    },
    {
      layer: "= with features, Map",
      animalStore: "AS memory",
      animalStoreCount: count("animal-store", scenario),
      fastify: "Fastify + features + Map",
      fastifyCount: count("fastify-features", scenario)
    },
    {
      layer: "+ store (PostgreSQL client side)",
      animalStore: "AS postgres - AS memory",
      animalStoreCount: difference("animal-store-postgres", "animal-store", scenario),
      fastify: "Fastify + features: pg - Map",
      fastifyCount: difference("fastify-features-pg", "fastify-features", scenario)
    },
    {
      layer: "= with features, PostgreSQL",
      animalStore: "AS postgres",
      animalStoreCount: count("animal-store-postgres", scenario),
      fastify: "Fastify + features + pg",
      fastifyCount: count("fastify-features-pg", scenario)
    }
  ]
  const split = options.scenarios.map((scenario) => ({ scenario, layers: layersOf(scenario) }))
  report.say("")
  report.say("   Where the instructions per request go, layer by layer: Animal Store (on Effect) beside the Fastify peer")
  comparisonTable("layer", split.flatMap(({ layers, scenario }) => layers.map((row) => [scenario, row.layer, row] as const)))
  const featuresTarget = options.scenarios.map((scenario) => {
    const features = layersOf(scenario).find((row) => row.layer === "+ features")
    const ratio = ratioOf(features?.animalStoreCount, features?.fastifyCount)
    // A create is reported, not held to it (docs/decisions/0015-throughput-bar.md): its counts move by more
    // than a feature costs, and the peer does not record the change's event.
    const verdict = ratio === undefined ? "-" : scenario === "create" ? "reported" : ratio <= 1 ? "met" : "not met"
    return `${scenario} ${fmtRatio(ratio)} (${verdict})`
  })
  report.say("   Differences of per-request counts from separate servers. Issue 21's target: the features add no more")
  report.say("   instructions over the Effect floor than over bare Fastify, i.e. the + features row at most 1.0x on reads:")
  report.say(`   ${featuresTarget.join(", ")}.`)

  // Per feature, when the servers with one left out were counted.
  const perFeature = servers.some((server) => server.onlyWhenNamed === true)
    ? options.scenarios.map((scenario) => {
      const features = FEATURES.map(({ animalStore, fastify, feature, without }) => ({
        feature,
        animalStore: `AS memory - AS ${without}`,
        animalStoreCount: difference("animal-store", animalStore, scenario),
        fastify: `Fastify + features - ${without}`,
        fastifyCount: difference("fastify-features", fastify, scenario)
      }))
      const rest = (all: number | undefined, three: ReadonlyArray<number | undefined>) =>
        three.reduce((left, cost) => (left === undefined || cost === undefined ? undefined : left - cost), all)
      const all = layersOf(scenario).find((row) => row.layer === "+ features")
      return {
        scenario,
        features: [
          ...features,
          {
            feature: "rest of the features",
            animalStore: "AS memory - Effect floor - the three",
            animalStoreCount: rest(all?.animalStoreCount, features.map((row) => row.animalStoreCount)),
            fastify: "Fastify + features - bare Fastify - the three",
            fastifyCount: rest(all?.fastifyCount, features.map((row) => row.fastifyCount))
          },
          {
            feature: "= all the features",
            animalStore: "AS memory - Effect floor",
            animalStoreCount: all?.animalStoreCount,
            fastify: "Fastify + features - bare Fastify",
            fastifyCount: all?.fastifyCount
          }
        ]
      }
    })
    : undefined
  if (perFeature !== undefined) {
    report.say("")
    report.say("   What each feature costs per request: the server with every feature on less the same server with that one off")
    comparisonTable(
      "feature",
      perFeature.flatMap(({ features, scenario }) => features.map((row) => [scenario, row.feature, row] as const))
    )
    report.say("   Differences of per-request counts from separate servers: each carries the run-to-run spread of two whole counts")
    report.say("   (about 5% of each; a create's more). Off: Animal Store LOG_LEVEL=none, RATE_LIMIT=off, METRICS=off (no /metrics,")
    report.say("   process figures or request and store-call series); Fastify no logger, no @fastify/rate-limit, no prom-client.")
  }
  return {
    perRequest: Object.fromEntries(Object.entries(counts).map(([kind, own]) => [LABEL[kind as Kind], own])),
    split: Object.fromEntries(split.map(({ scenario, layers }) => [scenario, layers])),
    ...(perFeature === undefined ? {} : { perFeature: Object.fromEntries(perFeature.map(({ scenario, features }) => [scenario, features])) }),
    requests: options.requests,
    warmupRequests: options.warmupRequests
  }
}
