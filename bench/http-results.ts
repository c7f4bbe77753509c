/**
 * What the side-by-side HTTP section reports from its runs: per scenario and server the
 * medians over passes, and Animal Store's ratios to the ceiling, to its Fastify peers and
 * to the Effect floor, each ratio taken within a pass (the same minute of the same
 * machine) and then the median; the Effect floor's own ratios; and the Map servers' CPU
 * per request split into the ceiling, Effect's platform and Animal Store's features.
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
  | "effect-map"
  | "effect-pg"

export const LABELS: Record<TargetKey, string> = {
  "as-memory": "Animal Store memory",
  "as-embedded": "Animal Store embedded",
  "as-postgres": "Animal Store postgres",
  reference: "reference node:http (ceiling)",
  "fastify-map": "Fastify + Map",
  "fastify-pg": "Fastify + pg",
  "effect-map": "Effect floor + Map",
  "effect-pg": "Effect floor + pg"
}

/**
 * Each Animal Store mode against the ceiling, the Fastify peer and the Effect floor on the
 * same storage, and any further comparison.
 */
const PEERS: ReadonlyArray<{ readonly subject: TargetKey; readonly against: ReadonlyArray<TargetKey> }> = [
  { subject: "as-memory", against: ["reference", "fastify-map", "effect-map"] },
  { subject: "as-embedded", against: ["reference", "fastify-pg", "effect-pg", "as-postgres"] },
  { subject: "as-postgres", against: ["reference", "fastify-pg", "effect-pg"] }
]

/** The Effect floor against the ceiling and Fastify on the same storage: what Effect's platform costs. */
const FLOOR_PEERS: ReadonlyArray<{ readonly subject: TargetKey; readonly against: ReadonlyArray<TargetKey> }> = [
  { subject: "effect-map", against: ["reference", "fastify-map"] },
  { subject: "effect-pg", against: ["fastify-pg"] }
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
  ratioTable("Animal Store", ratioRows)
  report.say("   Animal Store / other, per pass, median over passes. req/s ratio above 1x: Animal Store answers more;")
  report.say("   p50, p99, RSS and CPU/req ratios above 1x: Animal Store is slower / larger / costlier. CPU/req is the")
  report.say("   steadiest on shared cores, but counts only the server's own process (not PostgreSQL's).")

  const floorRatioRows = ratioRowsOf(FLOOR_PEERS)
  if (floorRatioRows.length > 0) {
    ratioTable("Effect floor", floorRatioRows)
    report.say("   Effect floor / other, as above: Effect's HTTP platform with the reference's request rules and")
    report.say("   nothing of Animal Store's features (no request log, request id, metrics, spans or schemas).")
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
    readonly platformShare: number | undefined
  }
  const cpuSplit: Array<CpuSplit> = []
  if (["reference", "effect-map", "as-memory"].every((key) => present.includes(key as TargetKey))) {
    for (const scenario of MEASURED) {
      const platformUs = cpuDifference(scenario, "effect-map", "reference")
      const featuresUs = cpuDifference(scenario, "as-memory", "effect-map")
      cpuSplit.push({
        scenario,
        ceilingUs: medianOf(runsOf(scenario, "reference").map((run) => run.serverCpuUsPerRequest)),
        platformUs,
        featuresUs,
        platformShare: platformUs === undefined || featuresUs === undefined || platformUs + featuresUs <= 0
          ? undefined
          : platformUs / (platformUs + featuresUs)
      })
    }
    report.table(
      [
        "scenario",
        "ceiling us/req",
        "+ Effect platform (floor - ceiling)",
        "+ Animal Store features (AS memory - floor)",
        "platform share of AS's excess"
      ],
      cpuSplit.map((row) => [
        SCENARIOS[row.scenario].label,
        fmt(row.ceilingUs),
        fmt(row.platformUs),
        fmt(row.featuresUs),
        row.platformShare === undefined ? "-" : `${fmt(100 * row.platformShare)}%`
      ])
    )
    report.say("   Server CPU per request on the Map, split: the node:http ceiling, what Effect's HTTP platform adds")
    report.say("   to it (Effect floor + Map), what Animal Store's features add to that (Animal Store memory). Per-pass")
    report.say("   differences, median over passes; the two added parts need not sum to a median of the whole.")
  }
  return { summaries, ratios: ratioRows, floorRatios: floorRatioRows, cpuSplit }
}
