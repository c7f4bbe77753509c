/**
 * Load generator for the side-by-side HTTP benchmark: autocannon (programmatic API) in
 * its own long-lived process, so it never shares an event loop with a server, and no
 * run pays for starting a process. The parent sends one CannonRequest at a time over
 * IPC and gets a CannonReply back (see cannon-client.ts).
 *
 * Latencies come from autocannon's per-response timings (hrtime, fractions of a ms)
 * rather than its histogram, which keeps whole milliseconds only and 2xx answers only.
 */
import autocannon from "autocannon"
import { type LatencyMs, percentile } from "./lib.ts"
import { type PlannedRequest, type RequestSource, SCENARIOS, type ScenarioName } from "./scenarios.ts"
import { mulberry32 } from "../test/e2e/Mulberry32.ts"

export interface CannonArgs {
  readonly port: number
  readonly scenario: ScenarioName
  readonly connections: number
  readonly seconds: number
  readonly apiKey: string
  readonly idMin: number
  readonly idMax: number
  readonly seed: number
  readonly path?: string
  /** Stop after this many requests instead of after `seconds` (which then only bounds the wait). */
  readonly amount?: number
}

export interface CannonResult {
  /** Responses received (any status). */
  readonly requests: number
  /** Requests sent, including those still unanswered when the run stopped (the server answers them anyway). */
  readonly sent: number
  readonly seconds: number
  readonly rps: number
  readonly latencyMs: LatencyMs
  readonly statuses: Record<string, number>
  /** Connection errors and timeouts, as autocannon counts them. */
  readonly errors: number
  readonly timeouts: number
  /** CPU time this process used during the run (user + system). */
  readonly clientCpuMs: number
}

export interface CannonRequest {
  readonly id: number
  readonly args: CannonArgs
}

export type CannonReply =
  | { readonly id: number; readonly result: CannonResult }
  | { readonly id: number; readonly error: string }

const MAX_SAMPLES = 4_000_000
const latencies = new Float64Array(MAX_SAMPLES)

const run = (args: CannonArgs): Promise<CannonResult> =>
  new Promise((resolve, reject) => {
    const scenario = SCENARIOS[args.scenario]
    const source: RequestSource = { idMin: args.idMin, idMax: args.idMax, random: mulberry32(args.seed), path: args.path }
    const toRequest = (planned: PlannedRequest): autocannon.Request =>
      planned.body === undefined
        ? { method: planned.method, path: planned.path, headers: { authorization: `Bearer ${args.apiKey}` } }
        : {
          method: planned.method,
          path: planned.path,
          body: planned.body,
          headers: { authorization: `Bearer ${args.apiKey}`, "content-type": "application/json" }
        }
    let sampled = 0
    let sum = 0
    const statuses: Record<string, number> = {}
    const cpuBefore = process.cpuUsage()
    const instance = autocannon({
      url: `http://127.0.0.1:${args.port}`,
      connections: args.connections,
      ...(args.amount === undefined ? { duration: args.seconds } : { amount: args.amount }),
      // autocannon checks for the end of the run once per sample interval (1 s by default),
      // which would stretch a 0.25 s warm-up to a second.
      sampleInt: 100,
      timeout: 10,
      // A fresh request per call: one entry whose setupRequest draws the next planned request.
      requests: [{ setupRequest: () => toRequest(scenario.next(source)) }]
    }, (error, result) => {
      if (error !== null && error !== undefined) return reject(error instanceof Error ? error : new Error(String(error)))
      const cpu = process.cpuUsage(cpuBefore)
      const sorted = latencies.slice(0, sampled).sort()
      const requests = Object.values(statuses).reduce((a, b) => a + b, 0)
      const seconds = Math.max(0.001, result.duration)
      resolve({
        requests,
        sent: result.requests.sent,
        seconds,
        rps: requests / seconds,
        latencyMs: {
          p50: percentile(sorted, 50),
          p90: percentile(sorted, 90),
          p99: percentile(sorted, 99),
          max: sampled === 0 ? Number.NaN : sorted[sampled - 1]!,
          mean: sampled === 0 ? Number.NaN : sum / sampled
        },
        statuses,
        errors: result.errors,
        timeouts: result.timeouts,
        clientCpuMs: (cpu.user + cpu.system) / 1000
      })
    })
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1
      if (sampled < MAX_SAMPLES) latencies[sampled++] = responseTime
      sum += responseTime
    })
  })

process.on("message", (message: CannonRequest) => {
  run(message.args).then(
    (result) => process.send?.({ id: message.id, result } satisfies CannonReply),
    (error: unknown) => process.send?.({ id: message.id, error: String(error) } satisfies CannonReply)
  )
})
// The parent going away (disconnect) ends this process too.
process.on("disconnect", () => process.exit(0))
