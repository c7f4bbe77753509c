/**
 * What the side-by-side HTTP section reports from its runs: per scenario and server the
 * medians over passes; Animal Store's ratios to the Effect floors (on a Map, on pg, on
 * sql-pg) and the driver's (sql-pg over pg), with the CPU per request of each; the owner's
 * targets against those floors, met or not; decision 15's bars against the feature-equal
 * Fastify, kept as regression floors; its ratios to the ceiling, to the Fastify peers and
 * to the Effect floor, each ratio taken within a pass (the same minute of the same
 * machine) and then the median; the Effect floor's and the features' own ratios; the Map
 * servers' CPU per request split into the ceiling, the framework (Effect's platform, bare
 * Fastify) and the features (Animal Store's, Fastify's plugins); and the PostgreSQL
 * servers' split into the layers from the ceiling up to Animal Store on PostgreSQL.
 */
import { fmt, fmtRatio, median } from "./lib.ts"
import type { Report } from "./report.ts"
import { MEASURED, SCENARIOS, type ScenarioName } from "./scenarios.ts"

export type TargetKey =
  | "as-memory"
  | "as-embedded"
  | "as-postgres"
  | "reference"
  | "fastify-map"
  | "fastify-pg"
  | "fastify-features-map"
  | "fastify-features-pg"
  | "effect-map"
  | "effect-pg"
  | "effect-sqlpg"

export const LABELS: Record<TargetKey, string> = {
  "as-memory": "Animal Store memory",
  "as-embedded": "Animal Store embedded",
  "as-postgres": "Animal Store postgres",
  reference: "reference node:http (ceiling)",
  "fastify-map": "bare Fastify + Map",
  "fastify-pg": "bare Fastify + pg",
  "fastify-features-map": "Fastify + features + Map",
  "fastify-features-pg": "Fastify + features + pg",
  "effect-map": "Effect floor + Map",
  "effect-pg": "Effect floor + pg",
  "effect-sqlpg": "Effect floor + sql-pg"
}

/**
 * Each Animal Store mode against the feature-equal Fastify peer, the ceiling, bare Fastify and
 * the Effect floor on the same storage, and any further comparison.
 */
const PEERS: ReadonlyArray<{ readonly subject: TargetKey; readonly against: ReadonlyArray<TargetKey> }> = [
  { subject: "as-memory", against: ["fastify-features-map", "reference", "fastify-map", "effect-map"] },
  { subject: "as-embedded", against: ["fastify-features-pg", "as-postgres", "reference", "fastify-pg", "effect-pg"] },
  { subject: "as-postgres", against: ["fastify-features-pg", "reference", "fastify-pg", "effect-pg", "effect-sqlpg"] }
]

/**
 * The peers against each other: the Effect floor against the ceiling and bare Fastify on the
 * same storage (what Effect's platform costs), the floor on sql-pg against the floor on pg
 * (what the driver costs), Fastify + features against bare Fastify (what the features cost
 * done with Fastify's plugins).
 */
const FLOOR_PEERS: ReadonlyArray<{ readonly subject: TargetKey; readonly against: ReadonlyArray<TargetKey> }> = [
  { subject: "effect-map", against: ["reference", "fastify-map"] },
  { subject: "effect-pg", against: ["fastify-pg"] },
  { subject: "effect-sqlpg", against: ["effect-pg", "fastify-pg"] },
  { subject: "fastify-features-map", against: ["fastify-map"] },
  { subject: "fastify-features-pg", against: ["fastify-pg"] }
]

/**
 * Decision 15's bars (docs/decisions/0015-throughput-bar.md, withdrawn as targets): every
 * Animal Store mode at least `rps` times the feature-equal Fastify's req/s. Kept as
 * regression floors, not targets. The p99 ratio is reported beside it: with a fixed number
 * of connections it follows from the req/s ratio.
 */
const REGRESSION_FLOORS: ReadonlyArray<
  { readonly subject: TargetKey; readonly against: TargetKey; readonly rps: number | undefined }
> = [
  { subject: "as-memory", against: "fastify-features-map", rps: 0.45 },
  { subject: "as-postgres", against: "fastify-features-pg", rps: 0.4 },
  { subject: "as-embedded", against: "fastify-features-pg", rps: undefined }
]

/** Whether a floor is held, given the req/s ratio; undefined when there is no bar or the ratio is missing. */
const verdict = (target: (typeof REGRESSION_FLOORS)[number], rps: number | undefined): boolean | undefined =>
  target.rps === undefined || rps === undefined ? undefined : rps >= target.rps

/**
 * The owner's targets, against Animal Store's own platform (the Effect floor on the same
 * storage), as ratios within the run: req/s at least `bar` times the other's, or CPU per
 * request at most `bar` times, in every measured scenario or in those named.
 */
interface OwnerTarget {
  readonly name: string
  readonly subject: TargetKey
  readonly against: TargetKey
  readonly measure: "rps" | "cpu"
  readonly bar: number
  readonly scenarios?: ReadonlyArray<ScenarioName>
}
const OWNER_TARGETS: ReadonlyArray<OwnerTarget> = [
  { name: "PostgreSQL", subject: "as-postgres", against: "effect-pg", measure: "rps", bar: 0.85 },
  { name: "Memory", subject: "as-memory", against: "effect-map", measure: "rps", bar: 0.75 },
  { name: "Embedded", subject: "as-embedded", against: "as-postgres", measure: "rps", bar: 0.8 },
  {
    name: "CPU/req on PostgreSQL",
    subject: "as-postgres",
    against: "effect-pg",
    measure: "cpu",
    bar: 1.3,
    scenarios: ["list", "create"]
  }
]

export interface HttpRun {
  readonly pass: number
  readonly scenario: ScenarioName
  readonly target: TargetKey
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  /** Peak RSS of the server process during the measured window (lifetime peak if it could not be reset). */
  readonly peakRssBytes: number | undefined
  readonly serverCpuUsPerRequest: number | undefined
  /** CPU of the PostgreSQL backends connected to the server's database, per answer. */
  readonly databaseCpuUsPerRequest: number | undefined
  readonly clientCpuPercent: number
  /** Answers with an unexpected status, and connection errors. */
  readonly bad: number
  readonly badDetail: string
}

/** Prints the summary and ratio tables; answers them for latest.json. */
export const reportHttp = (report: Report, runs: ReadonlyArray<HttpRun>, present: ReadonlyArray<TargetKey>, passes: number) => {
  const runsOf = (scenario: ScenarioName, key: TargetKey) => runs.filter((run) => run.scenario === scenario && run.target === key)
  const mb = (bytes: number | undefined) => (bytes === undefined ? undefined : bytes / 1024 / 1024)
  const maxOf = (values: ReadonlyArray<number | undefined>) => {
    const known = values.filter((value): value is number => value !== undefined)
    return known.length === 0 ? undefined : Math.max(...known)
  }
  const medianOf = (values: ReadonlyArray<number | undefined>) => {
    const known = values.filter((value): value is number => value !== undefined && !Number.isNaN(value))
    return known.length === 0 ? undefined : median(known)
  }

  interface Summary {
    readonly scenario: ScenarioName
    readonly target: TargetKey
    readonly rps: number | undefined
    readonly rpsMin: number | undefined
    readonly rpsMax: number | undefined
    readonly p50: number | undefined
    readonly p99: number | undefined
    readonly peakRssMb: number | undefined
    readonly serverCpuUsPerRequest: number | undefined
    readonly databaseCpuUsPerRequest: number | undefined
    readonly clientCpuPercent: number | undefined
    readonly bad: number
    readonly badDetail: string
  }
  const summaries: Array<Summary> = []
  for (const scenario of MEASURED) {
    for (const key of present) {
      const own = runsOf(scenario, key)
      summaries.push({
        scenario,
        target: key,
        rps: medianOf(own.map((run) => run.rps)),
        rpsMin: own.length === 0 ? undefined : Math.min(...own.map((run) => run.rps)),
        rpsMax: maxOf(own.map((run) => run.rps)),
        p50: medianOf(own.map((run) => run.p50)),
        p99: medianOf(own.map((run) => run.p99)),
        peakRssMb: mb(maxOf(own.map((run) => run.peakRssBytes))),
        serverCpuUsPerRequest: medianOf(own.map((run) => run.serverCpuUsPerRequest)),
        databaseCpuUsPerRequest: medianOf(own.map((run) => run.databaseCpuUsPerRequest)),
        clientCpuPercent: medianOf(own.map((run) => run.clientCpuPercent)),
        bad: own.reduce((sum, run) => sum + run.bad, 0),
        badDetail: own.map((run) => run.badDetail).filter((detail) => detail !== "").join(" ")
      })
    }
  }
  report.table(
    ["scenario", "server", "req/s", "req/s range", "p50 ms", "p99 ms", "peak RSS MB", "srv CPU us/req", "db CPU us/req", "loadgen CPU", "bad"],
    summaries.map((row) => [
      SCENARIOS[row.scenario].label,
      LABELS[row.target],
      fmt(row.rps),
      `${fmt(row.rpsMin)}-${fmt(row.rpsMax)}`,
      fmt(row.p50),
      fmt(row.p99),
      fmt(row.peakRssMb),
      fmt(row.serverCpuUsPerRequest),
      fmt(row.databaseCpuUsPerRequest),
      `${fmt(row.clientCpuPercent, 2)}%`,
      row.bad === 0 ? "0" : row.badDetail
    ])
  )
  report.say("   req/s, p50, p99, CPU: medians over passes; req/s range: slowest-fastest pass; peak RSS: the largest")
  report.say("   VmHWM of the server process over the measured windows (PostgreSQL's own processes not included;")
  report.say("   PGlite runs inside the embedded service, so it is). srv CPU us/req: the server process's CPU time per")
  report.say("   answer (10 ms ticks). db CPU us/req: for a server on PostgreSQL, the CPU of the backends connected to")
  report.say("   its database per answer (not the WAL writer's or autovacuum's). loadgen CPU near 100% means")
  report.say("   autocannon, not the server, set the pace.")

  /** Median over passes of a per-pass ratio subject/against; undefined if either side is missing. */
  const ratio = (scenario: ScenarioName, subject: TargetKey, against: TargetKey, pick: (run: HttpRun) => number | undefined) => {
    const values: Array<number> = []
    for (let pass = 0; pass < passes; pass++) {
      const a = runs.find((run) => run.pass === pass && run.scenario === scenario && run.target === subject)
      const b = runs.find((run) => run.pass === pass && run.scenario === scenario && run.target === against)
      const x = a === undefined ? undefined : pick(a)
      const y = b === undefined ? undefined : pick(b)
      if (x !== undefined && y !== undefined && y > 0) values.push(x / y)
    }
    return values.length === 0 ? undefined : median(values)
  }
  interface RatioRow {
    readonly scenario: ScenarioName
    readonly subject: TargetKey
    readonly against: TargetKey
    readonly rps: number | undefined
    readonly p50: number | undefined
    readonly p99: number | undefined
    readonly peakRss: number | undefined
    readonly cpuPerRequest: number | undefined
  }
  const ratioRowsOf = (pairs: typeof PEERS) => {
    const rows: Array<RatioRow> = []
    for (const scenario of MEASURED) {
      for (const { subject, against: others } of pairs) {
        if (!present.includes(subject)) continue
        for (const against of others) {
          if (!present.includes(against)) continue
          rows.push({
            scenario,
            subject,
            against,
            rps: ratio(scenario, subject, against, (run) => run.rps),
            p50: ratio(scenario, subject, against, (run) => run.p50),
            p99: ratio(scenario, subject, against, (run) => run.p99),
            peakRss: ratio(scenario, subject, against, (run) => run.peakRssBytes),
            cpuPerRequest: ratio(scenario, subject, against, (run) => run.serverCpuUsPerRequest)
          })
        }
      }
    }
    return rows
  }
  const ratioTable = (subjectHeader: string, rows: ReadonlyArray<RatioRow>) =>
    report.table(
      ["scenario", subjectHeader, "vs", "req/s ratio", "p50 ratio", "p99 ratio", "peak RSS ratio", "CPU/req ratio"],
      rows.map((row) => [
        SCENARIOS[row.scenario].label,
        LABELS[row.subject],
        LABELS[row.against],
        fmtRatio(row.rps),
        fmtRatio(row.p50),
        fmtRatio(row.p99),
        fmtRatio(row.peakRss),
        fmtRatio(row.cpuPerRequest)
      ])
    )
  const ratioRows = ratioRowsOf(PEERS)

  // -- Animal Store against the Effect floors; the owner's targets --------------------------
  const has = (...keys: ReadonlyArray<TargetKey>) => keys.every((key) => present.includes(key))
  const rpsRatio = (scenario: ScenarioName, subject: TargetKey, against: TargetKey) =>
    has(subject, against) ? ratio(scenario, subject, against, (run) => run.rps) : undefined
  const cpuRatio = (scenario: ScenarioName, subject: TargetKey, against: TargetKey) =>
    has(subject, against) ? ratio(scenario, subject, against, (run) => run.serverCpuUsPerRequest) : undefined
  const cpuOf = (scenario: ScenarioName, key: TargetKey) =>
    medianOf(runsOf(scenario, key).map((run) => run.serverCpuUsPerRequest))
  // Three digits: a ratio printed 0.85x must not be a 0.846 that misses a 0.85 bar.
  const ratio3 = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? "-" : `${fmt(value, 3)}x`)

  const FLOOR_PAIRS: ReadonlyArray<{ readonly name: string; readonly subject: TargetKey; readonly against: TargetKey }> = [
    { name: "AS memory / floor Map", subject: "as-memory", against: "effect-map" },
    { name: "AS postgres / floor pg", subject: "as-postgres", against: "effect-pg" },
    { name: "AS postgres / floor sql-pg", subject: "as-postgres", against: "effect-sqlpg" },
    { name: "floor sql-pg / floor pg", subject: "effect-sqlpg", against: "effect-pg" }
  ]
  const FLOOR_CPU: ReadonlyArray<TargetKey> = ["as-memory", "effect-map", "as-postgres", "effect-pg", "effect-sqlpg"]
  const SHORT_LABELS: Partial<Record<TargetKey, string>> = {
    "as-memory": "AS memory",
    "effect-map": "floor Map",
    "as-postgres": "AS postgres",
    "effect-pg": "floor pg",
    "effect-sqlpg": "floor sql-pg"
  }
  interface FloorRow {
    readonly scenario: ScenarioName
    /** Per FLOOR_PAIRS: req/s ratio and CPU/req ratio, per pass, median over passes. */
    readonly rps: Record<string, number | undefined>
    readonly cpuRatio: Record<string, number | undefined>
    /** Median CPU per request, µs, per FLOOR_CPU server. */
    readonly cpuUs: Partial<Record<TargetKey, number | undefined>>
  }
  const floorRows: Array<FloorRow> = MEASURED.map((scenario) => ({
    scenario,
    rps: Object.fromEntries(FLOOR_PAIRS.map((pair) => [pair.name, rpsRatio(scenario, pair.subject, pair.against)])),
    cpuRatio: Object.fromEntries(FLOOR_PAIRS.map((pair) => [pair.name, cpuRatio(scenario, pair.subject, pair.against)])),
    cpuUs: Object.fromEntries(FLOOR_CPU.filter((key) => has(key)).map((key) => [key, cpuOf(scenario, key)]))
  }))
  if (has("effect-map") || has("effect-pg") || has("effect-sqlpg")) {
    report.table(
      ["scenario", ...FLOOR_PAIRS.map((pair) => `req/s ${pair.name}`)],
      floorRows.map((row) => [SCENARIOS[row.scenario].label, ...FLOOR_PAIRS.map((pair) => ratio3(row.rps[pair.name]))])
    )
    report.say("   Animal Store against the Effect floor on the same storage (Effect's HTTP platform with the reference's")
    report.say("   request rules, nothing of Animal Store's features): on a Map, on PostgreSQL through node-postgres (pg)")
    report.say("   and through @effect/sql-pg, Animal Store's driver (a pool of 10 each, prepared statements, the same")
    report.say("   statements, rows mapped by hand). floor sql-pg / floor pg is the driver's cost: at 0.9x or more, what")
    report.say("   Animal Store loses on PostgreSQL is in its adapter and features, not the driver. Per pass, median.")
    report.table(
      [
        "scenario",
        ...FLOOR_CPU.map((key) => `${SHORT_LABELS[key]} us/req`),
        ...FLOOR_PAIRS.map((pair) => `CPU ${pair.name}`)
      ],
      floorRows.map((row) => [
        SCENARIOS[row.scenario].label,
        ...FLOOR_CPU.map((key) => fmt(row.cpuUs[key])),
        ...FLOOR_PAIRS.map((pair) => ratio3(row.cpuRatio[pair.name]))
      ])
    )
    report.say("   Server CPU per request (the server process's own, from /proc, 10 ms ticks; PostgreSQL's backends not")
    report.say("   counted), medians over passes, and its ratios per pass, median over passes: above 1x, costlier.")
  }

  interface TargetRow {
    readonly target: OwnerTarget
    /** Per scenario the target covers: the ratio, per pass, median over passes. */
    readonly ratios: Partial<Record<ScenarioName, number | undefined>>
    /** The scenarios that miss the bar (or have no ratio). */
    readonly missed: ReadonlyArray<ScenarioName>
    /** Undefined when a side was not measured (left out, or it died). */
    readonly met: boolean | undefined
  }
  const SHORT: Record<ScenarioName, string> = {
    list: "list",
    listSold: "list sold",
    getById: "get",
    create: "create",
    mixed: "mixed",
    path: "path"
  }
  const targetRows: Array<TargetRow> = []
  for (const target of OWNER_TARGETS) {
    if (!has(target.subject, target.against)) {
      targetRows.push({ target, ratios: {}, missed: [], met: undefined })
      continue
    }
    const scenarios = target.scenarios ?? MEASURED
    const ratios = Object.fromEntries(scenarios.map((scenario) => [
      scenario,
      target.measure === "rps"
        ? rpsRatio(scenario, target.subject, target.against)
        : cpuRatio(scenario, target.subject, target.against)
    ]))
    const missed = scenarios.filter((scenario) => {
      const value = ratios[scenario]
      return value === undefined || (target.measure === "rps" ? value < target.bar : value > target.bar)
    })
    targetRows.push({ target, ratios, missed, met: missed.length === 0 })
  }
  if (targetRows.length > 0) {
    report.table(
      ["target", "ratio", "bar", ...MEASURED.map((scenario) => SHORT[scenario]), "met"],
      targetRows.map(({ target, ratios, missed, met }) => [
        target.name,
        `${target.measure === "rps" ? "req/s" : "CPU/req"} ${LABELS[target.subject]} / ${LABELS[target.against]}`,
        `${target.measure === "rps" ? ">=" : "<="} ${target.bar}x`,
        ...MEASURED.map((scenario) => scenario in ratios ? ratio3(ratios[scenario]) : ""),
        met === undefined
          ? `not judged: ${[target.subject, target.against].filter((key) => !has(key)).map((key) => LABELS[key]).join(", ")} not measured`
          : met
          ? "met"
          : `not met (${missed.map((scenario) => SHORT[scenario]).join(", ")})`
      ])
    )
    report.say("   The owner's targets, against Animal Store's own platform on the same storage: ratios within this run")
    report.say("   (per pass, median over passes), each in every scenario it names (CPU/req: a list and a create). On a")
    report.say("   loaded machine req/s is noisy; CPU per request is steadier; the instructions section steadier still.")
  }

  interface RegressionRow {
    readonly floor: (typeof REGRESSION_FLOORS)[number]
    readonly ratios: Partial<Record<ScenarioName, number | undefined>>
    /** Undefined when there is no bar. */
    readonly held: boolean | undefined
  }
  const regressionRows: Array<RegressionRow> = []
  for (const floor of REGRESSION_FLOORS) {
    if (!has(floor.subject, floor.against)) continue
    const ratios = Object.fromEntries(MEASURED.map((scenario) => [scenario, rpsRatio(scenario, floor.subject, floor.against)]))
    const verdicts = MEASURED.map((scenario) => verdict(floor, ratios[scenario]))
    regressionRows.push({
      floor,
      ratios,
      held: floor.rps === undefined ? undefined : verdicts.every((held) => held === true)
    })
  }
  if (regressionRows.length > 0) {
    report.table(
      ["regression floor (decision 15)", "bar", ...MEASURED.map((scenario) => SHORT[scenario]), "held"],
      regressionRows.map(({ floor, ratios, held }) => [
        `req/s ${LABELS[floor.subject]} / ${LABELS[floor.against]}`,
        floor.rps === undefined ? "-" : `>= ${floor.rps}x`,
        ...MEASURED.map((scenario) => ratio3(ratios[scenario])),
        held === undefined ? "-" : held ? "yes" : "no"
      ])
    )
    report.say("   Decision 15's bars against the feature-equal Fastify (withdrawn as targets): regression floors only.")
  }

  ratioTable("Animal Store", ratioRows)
  report.say("   Animal Store / other, per pass, median over passes. req/s ratio above 1x: Animal Store answers more;")
  report.say("   p50, p99, RSS and CPU/req ratios above 1x: Animal Store is slower / larger / costlier. CPU/req is the")
  report.say("   steadiest on shared cores, but counts only the server's own process (not PostgreSQL's).")

  const floorRatioRows = ratioRowsOf(FLOOR_PEERS)
  if (floorRatioRows.length > 0) {
    ratioTable("peer", floorRatioRows)
    report.say("   peer / other, as above. The Effect floor: Effect's HTTP platform with the reference's request rules and")
    report.say("   nothing of Animal Store's features (no request log, request id, metrics, spans or schemas); against")
    report.say("   the ceiling and bare Fastify it shows what the platform costs. Fastify + features against bare Fastify:")
    report.say("   what the same features cost with Fastify's plugins (pino, @fastify/rate-limit, prom-client).")
  }

  /** Median over passes of a per-pass difference of server CPU per request, in µs. */
  const cpuDifference = (scenario: ScenarioName, subject: TargetKey, against: TargetKey) => {
    const values: Array<number> = []
    for (let pass = 0; pass < passes; pass++) {
      const a = runs.find((run) => run.pass === pass && run.scenario === scenario && run.target === subject)
      const b = runs.find((run) => run.pass === pass && run.scenario === scenario && run.target === against)
      if (a?.serverCpuUsPerRequest !== undefined && b?.serverCpuUsPerRequest !== undefined) {
        values.push(a.serverCpuUsPerRequest - b.serverCpuUsPerRequest)
      }
    }
    return values.length === 0 ? undefined : median(values)
  }
  interface CpuSplit {
    readonly scenario: ScenarioName
    readonly ceilingUs: number | undefined
    /** Effect floor + Map minus the ceiling: Effect's HTTP platform. */
    readonly platformUs: number | undefined
    /** Animal Store memory minus Effect floor + Map: Animal Store's features. */
    readonly featuresUs: number | undefined
    /** Bare Fastify + Map minus the ceiling: Fastify itself. */
    readonly fastifyUs: number | undefined
    /** Fastify + features + Map minus bare Fastify + Map: the features with Fastify's plugins. */
    readonly fastifyFeaturesUs: number | undefined
  }
  const cpuSplit: Array<CpuSplit> = []
  if (["reference", "effect-map", "as-memory"].every((key) => present.includes(key as TargetKey))) {
    for (const scenario of MEASURED) {
      cpuSplit.push({
        scenario,
        ceilingUs: medianOf(runsOf(scenario, "reference").map((run) => run.serverCpuUsPerRequest)),
        platformUs: cpuDifference(scenario, "effect-map", "reference"),
        featuresUs: cpuDifference(scenario, "as-memory", "effect-map"),
        fastifyUs: cpuDifference(scenario, "fastify-map", "reference"),
        fastifyFeaturesUs: cpuDifference(scenario, "fastify-features-map", "fastify-map")
      })
    }
    report.table(
      [
        "scenario",
        "ceiling us/req",
        "+ Effect platform (floor - ceiling)",
        "+ Animal Store features (AS memory - floor)",
        "+ Fastify (bare Fastify - ceiling)",
        "+ Fastify's features (Fastify + features - bare)",
        "features AS / Fastify"
      ],
      cpuSplit.map((row) => [
        SCENARIOS[row.scenario].label,
        fmt(row.ceilingUs),
        fmt(row.platformUs),
        fmt(row.featuresUs),
        fmt(row.fastifyUs),
        fmt(row.fastifyFeaturesUs),
        fmtRatio(
          row.featuresUs === undefined || row.fastifyFeaturesUs === undefined || row.fastifyFeaturesUs <= 0
            ? undefined
            : row.featuresUs / row.fastifyFeaturesUs
        )
      ])
    )
    report.say("   Server CPU per request on the Map, split: the node:http ceiling; what each framework adds to it (the")
    report.say("   Effect floor: Effect's HTTP platform; bare Fastify); what the same features add to each (Animal Store")
    report.say("   memory over the floor; Fastify + features over bare Fastify). Per-pass differences, median over passes;")
    report.say("   the parts need not sum to a median of the whole. 10 ms CPU ticks under load: the instructions section")
    report.say("   splits the same way with counts that do not move with the machine's load.")
  }

  /** Median over passes of a per-pass difference of two differences: (a - b) - (c - d). */
  const cpuDoubleDifference = (scenario: ScenarioName, a: TargetKey, b: TargetKey, c: TargetKey, d: TargetKey) => {
    const values: Array<number> = []
    for (let pass = 0; pass < passes; pass++) {
      const cpu = (key: TargetKey) =>
        runs.find((run) => run.pass === pass && run.scenario === scenario && run.target === key)?.serverCpuUsPerRequest
      const [x, y, z, w] = [cpu(a), cpu(b), cpu(c), cpu(d)]
      if (x !== undefined && y !== undefined && z !== undefined && w !== undefined) values.push(x - y - (z - w))
    }
    return values.length === 0 ? undefined : median(values)
  }
  interface PgCpuSplit {
    readonly scenario: ScenarioName
    readonly animalStoreUs: number | undefined
    readonly floorPgUs: number | undefined
    readonly ceilingUs: number | undefined
    /** Effect floor + Map minus the ceiling: Effect's HTTP platform. */
    readonly platformUs: number | undefined
    /** Effect floor + pg minus Effect floor + Map: node-postgres and its Promise, in place of the Map. */
    readonly nodePostgresUs: number | undefined
    /** Effect floor + sql-pg minus Effect floor + pg: what @effect/sql-pg costs over node-postgres. */
    readonly driverUs: number | undefined
    /** Animal Store postgres minus Effect floor + sql-pg: Animal Store's SQL adapter and features. */
    readonly adapterAndFeaturesUs: number | undefined
    /** Animal Store memory minus Effect floor + Map: the features, as they cost on the memory store. */
    readonly featuresOnMemoryUs: number | undefined
    /** The two above, one from the other: Animal Store's SQL adapter, if the features cost on PostgreSQL what they cost on memory. */
    readonly adapterUs: number | undefined
  }
  const pgCpuSplit: Array<PgCpuSplit> = []
  if (has("as-postgres", "effect-pg", "effect-sqlpg")) {
    for (const scenario of MEASURED) {
      pgCpuSplit.push({
        scenario,
        animalStoreUs: cpuOf(scenario, "as-postgres"),
        floorPgUs: cpuOf(scenario, "effect-pg"),
        ceilingUs: has("reference") ? cpuOf(scenario, "reference") : undefined,
        platformUs: cpuDifference(scenario, "effect-map", "reference"),
        nodePostgresUs: cpuDifference(scenario, "effect-pg", "effect-map"),
        driverUs: cpuDifference(scenario, "effect-sqlpg", "effect-pg"),
        adapterAndFeaturesUs: cpuDifference(scenario, "as-postgres", "effect-sqlpg"),
        featuresOnMemoryUs: cpuDifference(scenario, "as-memory", "effect-map"),
        adapterUs: cpuDoubleDifference(scenario, "as-postgres", "effect-sqlpg", "as-memory", "effect-map")
      })
    }
    report.table(
      [
        "scenario",
        "AS pg us/req",
        "floor pg us/req",
        "ceiling",
        "+ platform (floor Map - ceiling)",
        "+ node-postgres (floor pg - floor Map)",
        "+ driver (floor sql-pg - floor pg)",
        "+ AS adapter & features (AS pg - floor sql-pg)",
        "features (AS mem - floor Map)",
        "SQL adapter (difference)"
      ],
      pgCpuSplit.map((row) => [
        SCENARIOS[row.scenario].label,
        fmt(row.animalStoreUs),
        fmt(row.floorPgUs),
        fmt(row.ceilingUs),
        fmt(row.platformUs),
        fmt(row.nodePostgresUs),
        fmt(row.driverUs),
        fmt(row.adapterAndFeaturesUs),
        fmt(row.featuresOnMemoryUs),
        fmt(row.adapterUs)
      ])
    )
    report.say("   Server CPU per request on PostgreSQL, split into layers, in us: differences of measured CPU per request")
    report.say("   between servers one layer apart (per pass, median over passes; the parts need not sum to the whole).")
    report.say("   The ceiling is the node:http reference (on a Map); the floor on pg is the ceiling + Effect's platform")
    report.say("   + node-postgres (its Promise included, in place of the Map); the driver's share is the floor on")
    report.say("   sql-pg over the floor on pg; Animal Store's SQL adapter and features are Animal Store on PostgreSQL over")
    report.say("   the floor on sql-pg. Taking the features at their cost on memory (AS memory - floor Map) leaves the")
    report.say("   adapter (rows decoded through schemas, the create's event insert, deadlines, store metrics and spans)")
    report.say("   as a difference of differences: the noisiest column. Only the server process's CPU: what PostgreSQL's")
    report.say("   backends do (for Animal Store's create also the event insert and the sequencer's statements) is not.")
  }
  return {
    summaries,
    floors: floorRows,
    targets: targetRows,
    regressionFloors: regressionRows,
    ratios: ratioRows,
    floorRatios: floorRatioRows,
    cpuSplit,
    pgCpuSplit
  }
}
