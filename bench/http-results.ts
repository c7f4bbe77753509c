/**
 * What the side-by-side HTTP section reports from its runs: per scenario and server the
 * medians over passes; Animal Store's ratios to the feature-equal Fastify peer against
 * issue 21's targets; its ratios to the ceiling, to the Fastify peers and to the Effect
 * floor, each ratio taken within a pass (the same minute of the same machine) and then the
 * median; the Effect floor's and the features' own ratios; and the Map servers' CPU per
 * request split into the ceiling, the framework (Effect's platform, bare Fastify) and the
 * features (Animal Store's, Fastify's plugins).
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
  "effect-pg": "Effect floor + pg"
}

/**
 * Each Animal Store mode against the feature-equal Fastify peer, the ceiling, bare Fastify and
 * the Effect floor on the same storage, and any further comparison.
 */
const PEERS: ReadonlyArray<{ readonly subject: TargetKey; readonly against: ReadonlyArray<TargetKey> }> = [
  { subject: "as-memory", against: ["fastify-features-map", "reference", "fastify-map", "effect-map"] },
  { subject: "as-embedded", against: ["fastify-features-pg", "as-postgres", "reference", "fastify-pg", "effect-pg"] },
  { subject: "as-postgres", against: ["fastify-features-pg", "reference", "fastify-pg", "effect-pg"] }
]

/**
 * The peers against each other: the Effect floor against the ceiling and bare Fastify on the
 * same storage (what Effect's platform costs), Fastify + features against bare Fastify (what
 * the features cost done with Fastify's plugins).
 */
const FLOOR_PEERS: ReadonlyArray<{ readonly subject: TargetKey; readonly against: ReadonlyArray<TargetKey> }> = [
  { subject: "effect-map", against: ["reference", "fastify-map"] },
  { subject: "effect-pg", against: ["fastify-pg"] },
  { subject: "fastify-features-map", against: ["fastify-map"] },
  { subject: "fastify-features-pg", against: ["fastify-pg"] }
]

/**
 * Issue 21's targets, as docs/decisions/0015-throughput-bar.md set them: every Animal Store
 * mode at least `rps` times its peer's req/s. The p99 ratio is reported beside it: with a
 * fixed number of connections it follows from the req/s ratio.
 */
const TARGETS: ReadonlyArray<{ readonly subject: TargetKey; readonly against: TargetKey; readonly rps: number | undefined }> = [
  { subject: "as-memory", against: "fastify-features-map", rps: 0.45 },
  { subject: "as-postgres", against: "fastify-features-pg", rps: 0.4 },
  { subject: "as-embedded", against: "fastify-features-pg", rps: undefined },
  { subject: "as-embedded", against: "as-postgres", rps: 0.8 }
]

/** Whether a target is met, given the req/s ratio; undefined when there is no target or the ratio is missing. */
const verdict = (target: (typeof TARGETS)[number], rps: number | undefined): boolean | undefined =>
  target.rps === undefined || rps === undefined ? undefined : rps >= target.rps

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
        clientCpuPercent: medianOf(own.map((run) => run.clientCpuPercent)),
        bad: own.reduce((sum, run) => sum + run.bad, 0),
        badDetail: own.map((run) => run.badDetail).filter((detail) => detail !== "").join(" ")
      })
    }
  }
  report.table(
    ["scenario", "server", "req/s", "req/s range", "p50 ms", "p99 ms", "peak RSS MB", "srv CPU us/req", "loadgen CPU", "bad"],
    summaries.map((row) => [
      SCENARIOS[row.scenario].label,
      LABELS[row.target],
      fmt(row.rps),
      `${fmt(row.rpsMin)}-${fmt(row.rpsMax)}`,
      fmt(row.p50),
      fmt(row.p99),
      fmt(row.peakRssMb),
      fmt(row.serverCpuUsPerRequest),
      `${fmt(row.clientCpuPercent, 2)}%`,
      row.bad === 0 ? "0" : row.badDetail
    ])
  )
  report.say("   req/s, p50, p99, CPU: medians over passes; req/s range: slowest-fastest pass; peak RSS: the largest")
  report.say("   VmHWM of the server process over the measured windows (PostgreSQL's own processes not included;")
  report.say("   PGlite runs inside the embedded service, so it is). srv CPU us/req: the server process's CPU time per")
  report.say("   answer (10 ms ticks). loadgen CPU near 100% means autocannon, not the server, set the pace.")

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

  interface TargetRow {
    readonly scenario: ScenarioName
    readonly target: (typeof TARGETS)[number]
    readonly rps: number | undefined
    readonly p99: number | undefined
    readonly cpuPerRequest: number | undefined
    /** Undefined when there is no target, or a side is missing. */
    readonly met: boolean | undefined
  }
  const targetRows: Array<TargetRow> = []
  for (const target of TARGETS) {
    if (!present.includes(target.subject) || !present.includes(target.against)) continue
    for (const scenario of MEASURED) {
      const row = ratioRows.find((row) =>
        row.scenario === scenario && row.subject === target.subject && row.against === target.against
      )
      targetRows.push({
        scenario,
        target,
        rps: row?.rps,
        p99: row?.p99,
        cpuPerRequest: row?.cpuPerRequest,
        met: verdict(target, row?.rps)
      })
    }
  }
  if (targetRows.length > 0) {
    report.table(
      ["scenario", "Animal Store", "vs", "req/s ratio", "p99 ratio", "CPU/req ratio", "target", "met"],
      targetRows.map(({ scenario, target, rps, p99, cpuPerRequest, met }) => [
        SCENARIOS[scenario].label,
        LABELS[target.subject],
        LABELS[target.against],
        fmtRatio(rps),
        fmtRatio(p99),
        fmtRatio(cpuPerRequest),
        target.rps === undefined ? "-" : `req/s >= ${target.rps}x`,
        met === undefined ? "-" : met ? "yes" : "no"
      ])
    )
    report.say("   Issue 21's targets (docs/decisions/0015-throughput-bar.md): each Animal Store mode against the")
    report.say("   feature-equal Fastify peer on the same storage (embedded: against Fastify + features + pg, and at")
    report.say("   least 0.8x the postgres mode). Ratios as below: Animal Store / other per pass, median over passes;")
    report.say("   req/s above 1x and p99 below 1x favour Animal Store. On a loaded machine req/s and p99 are noisy;")
    report.say("   the instructions section is not.")
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
  return { summaries, targets: targetRows, ratios: ratioRows, floorRatios: floorRatioRows, cpuSplit }
}
