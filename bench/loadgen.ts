/**
 * Load generator of the hostile-input section (bodies by name, count-bounded runs,
 * probes at an interval; the side-by-side HTTP section uses autocannon, cannon.ts), run
 * as its own process so that it does not share an event loop with the server it
 * measures. node:http with a keep-alive agent and a fixed number of concurrent request
 * loops; bounded by duration and by request count. 127.0.0.1 only.
 *
 * Usage: node bench/loadgen.ts '<json LoadArgs>'; writes a LoadResult to args.resultPath.
 */
import { writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { BODIES, type BodyName } from "./bodies.ts"
import { type LatencyMs, percentile } from "./lib.ts"

export interface LoadArgs {
  readonly port: number
  readonly resultPath: string
  readonly method: "GET" | "POST"
  readonly path: string
  readonly body?: BodyName
  readonly headers?: Record<string, string>
  /** Concurrent request loops (each waits for its response before the next request). */
  readonly concurrency: number
  /** Total wall time including warm-up. */
  readonly durationMs: number
  /** Leading time whose requests are not recorded. */
  readonly warmupMs: number
  /** Stop after this many requests (warm-up included), whichever bound comes first. */
  readonly maxRequests?: number
  /** Requests not recorded at the start (for count-bounded runs). */
  readonly warmupRequests?: number
  /** Pause between a loop's requests (a probe, not a load). */
  readonly intervalMs?: number
  /** A request that takes longer is aborted and counted as "timeout". */
  readonly timeoutMs: number
  /** Do not reuse connections. */
  readonly noKeepAlive?: boolean
}

export interface LoadResult {
  readonly requests: number
  /** Requests completed in the whole run, warm-up included (for server CPU per request). */
  readonly completedTotal: number
  readonly windowMs: number
  readonly rps: number
  readonly latencyMs: LatencyMs
  readonly statuses: Record<string, number>
  readonly errors: Record<string, number>
  /** CPU time this process used while measuring (user + system). */
  readonly clientCpuMs: number
  readonly sampled: number
}

const args = JSON.parse(process.argv[2] ?? "{}") as LoadArgs

// Latencies in milliseconds, capped so a fast run cannot exhaust memory.
const MAX_SAMPLES = 2_000_000
const latencies = new Float64Array(MAX_SAMPLES)
let sampled = 0
let recorded = 0
let completedTotal = 0
const statuses: Record<string, number> = {}
const errors: Record<string, number> = {}

const bodyBuffer = args.body === undefined ? undefined : Buffer.from(BODIES[args.body](), "utf8")
const headers: Record<string, string | number> = { ...args.headers }
if (bodyBuffer !== undefined) {
  headers["content-type"] ??= "application/json"
  headers["content-length"] = bodyBuffer.length
}

const agent = new Agent({ keepAlive: args.noKeepAlive !== true, maxSockets: args.concurrency })

type Outcome = { readonly status: number } | { readonly error: string }

const once = (path: string): Promise<Outcome> =>
  new Promise((resolve) => {
    let settled = false
    const settle = (outcome: Outcome) => {
      if (settled) return
      settled = true
      resolve(outcome)
    }
    const req = request(
      { host: "127.0.0.1", port: args.port, method: args.method, path, headers, agent },
      (res) => {
        res.on("data", () => {})
        res.on("end", () => settle({ status: res.statusCode ?? 0 }))
        res.on("error", () => settle({ status: res.statusCode ?? 0 }))
      }
    )
    req.on("error", (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }))
    req.setTimeout(args.timeoutMs, () => {
      settle({ error: "timeout" })
      req.destroy()
    })
    req.end(bodyBuffer)
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const main = async () => {
  const start = performance.now()
  const measureFrom = start + args.warmupMs
  const end = start + args.durationMs
  const maxRequests = args.maxRequests ?? Number.POSITIVE_INFINITY
  const warmupRequests = args.warmupRequests ?? 0
  let issued = 0
  let cpuAtMeasureStart: NodeJS.CpuUsage | undefined
  let windowStart = measureFrom

  const loop = async () => {
    while (performance.now() < end && issued < maxRequests) {
      const n = issued++
      const t0 = performance.now()
      const outcome = await once(args.path)
      const t1 = performance.now()
      completedTotal++
      if (t0 >= measureFrom && n >= warmupRequests) {
        if (cpuAtMeasureStart === undefined) {
          cpuAtMeasureStart = process.cpuUsage()
          windowStart = t0
        }
        recorded++
        if (sampled < MAX_SAMPLES) latencies[sampled++] = t1 - t0
        if ("status" in outcome) statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1
        else errors[outcome.error] = (errors[outcome.error] ?? 0) + 1
      }
      if (args.intervalMs !== undefined) await sleep(args.intervalMs)
    }
  }
  await Promise.all(Array.from({ length: args.concurrency }, loop))
  const windowEnd = performance.now()
  const cpu = process.cpuUsage(cpuAtMeasureStart)
  const sorted = latencies.slice(0, sampled).sort()
  let sum = 0
  for (const value of sorted) sum += value
  const windowMs = Math.max(1, windowEnd - windowStart)
  const result: LoadResult = {
    requests: recorded,
    completedTotal,
    windowMs,
    rps: (recorded * 1000) / windowMs,
    latencyMs: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
      mean: sorted.length === 0 ? Number.NaN : sum / sorted.length
    },
    statuses,
    errors,
    clientCpuMs: cpuAtMeasureStart === undefined ? 0 : (cpu.user + cpu.system) / 1000,
    sampled
  }
  writeFileSync(args.resultPath, JSON.stringify(result, null, 2))
  agent.destroy()
}

// A hard stop in case a server never answers: the duration plus the per-request timeout.
setTimeout(() => {
  process.stderr.write("loadgen: hard deadline reached\n")
  process.exit(2)
}, args.durationMs + args.timeoutMs + 5_000).unref()

main().catch((error: unknown) => {
  process.stderr.write(`loadgen failed: ${String(error)}\n`)
  process.exit(1)
})
