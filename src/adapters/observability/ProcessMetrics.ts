/**
 * The process and Node.js series that dashboards for Node services query (Grafana's Node.js
 * dashboards among them), under the names and types prom-client's default metrics give
 * them, made with effect's metrics: CPU, memory and heap, event-loop lag, and garbage
 * collections by kind. All but the collections are read when a scrape asks for them; the
 * collections are counted as V8 reports them.
 */
import { Effect, Metric } from "effect"
import {
  constants,
  monitorEventLoopDelay,
  type NodeGCPerformanceDetail,
  type PerformanceEntry,
  PerformanceObserver
} from "node:perf_hooks"

const NANOS_PER_SECOND = 1e9
const MICROS_PER_SECOND = 1e6
const MILLIS_PER_SECOND = 1e3

const counter = (name: string, description: string) => Metric.counter(name, { description })
const gauge = (name: string, description: string) => Metric.gauge(name, { description })

const cpuUser = counter("process_cpu_user_seconds_total", "Total user CPU time spent in seconds.")
const cpuSystem = counter("process_cpu_system_seconds_total", "Total system CPU time spent in seconds.")
const cpuTotal = counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.")
const startTime = gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.")
const residentMemory = gauge("process_resident_memory_bytes", "Resident memory size in bytes.")
const heapTotal = gauge("nodejs_heap_size_total_bytes", "Process heap size from Node.js in bytes.")
const heapUsed = gauge("nodejs_heap_size_used_bytes", "Process heap size used from Node.js in bytes.")
const externalMemory = gauge("nodejs_external_memory_bytes", "Node.js external memory size in bytes.")
const lag = gauge("nodejs_eventloop_lag_seconds", "Lag of event loop in seconds, measured when scraped.")
const lagMin = gauge("nodejs_eventloop_lag_min_seconds", "The minimum recorded event loop delay.")
const lagMax = gauge("nodejs_eventloop_lag_max_seconds", "The maximum recorded event loop delay.")
const lagMean = gauge("nodejs_eventloop_lag_mean_seconds", "The mean of the recorded event loop delays.")
const lagStddev = gauge("nodejs_eventloop_lag_stddev_seconds", "The standard deviation of the recorded event loop delays.")
const lagPercentile = (percentile: 50 | 90 | 99) =>
  gauge(`nodejs_eventloop_lag_p${percentile}_seconds`, `The ${percentile}th percentile of the recorded event loop delays.`)
const lagP50 = lagPercentile(50)
const lagP90 = lagPercentile(90)
const lagP99 = lagPercentile(99)
const versionInfo = (version: string) => {
  const [major = "", minor = "", patch = ""] = version.slice(1).split(".")
  return Metric.gauge("nodejs_version_info", {
    description: "Node.js version info.",
    attributes: { version, major, minor, patch }
  })
}

/** prom-client's buckets for collections, in seconds. */
const GC_BOUNDARIES = [0.001, 0.01, 0.1, 1, 2, 5]
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb"
}
const gcDurations = Object.fromEntries(Object.entries(GC_KINDS).map(([flag, kind]) => [
  flag,
  Metric.histogram("nodejs_gc_duration_seconds", {
    description: "Garbage collection duration by kind, one of major, minor, incremental or weakcb.",
    attributes: { kind },
    boundaries: GC_BOUNDARIES
  })
]))

/** The time until the event loop runs a callback queued now: its lag at this moment. */
const currentLag = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const queued = process.hrtime.bigint()
    setImmediate(() => resolve(Number(process.hrtime.bigint() - queued) / NANOS_PER_SECOND))
  })
)

/**
 * Starts watching the event loop and the collector for as long as the scope lasts, and
 * returns the effect that brings every series up to date; run it before each scrape.
 */
export const start = Effect.fn("ProcessMetrics.start")(function*() {
  const context = yield* Effect.context<never>()
  // Sampled every 10 ms (prom-client's resolution); each scrape reports the window since the last one.
  const delay = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const histogram = monitorEventLoopDelay({ resolution: 10 })
      histogram.enable()
      return histogram
    }),
    (histogram) => Effect.sync(() => histogram.disable())
  )
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      const observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          // A "gc" entry's detail is a NodeGCPerformanceDetail (Node's types leave it untyped).
          const { kind } = (entry as PerformanceEntry & { readonly detail: NodeGCPerformanceDetail }).detail
          gcDurations[kind]?.updateUnsafe(entry.duration / MILLIS_PER_SECOND, context)
        }
      })
      observer.observe({ entryTypes: ["gc"] })
      return observer
    }),
    (observer) => Effect.sync(() => observer.disconnect())
  )
  // Zero until a window has samples, so every series is there from the first scrape.
  for (const recorded of [lagMin, lagMax, lagMean, lagStddev, lagP50, lagP90, lagP99]) yield* Metric.update(recorded, 0)
  yield* Metric.update(startTime, performance.timeOrigin / MILLIS_PER_SECOND)
  yield* Metric.update(versionInfo(process.version), 1)
  // Counters add what was spent since the previous scrape, so they total the CPU time since start.
  let counted = { user: 0, system: 0 }

  return Effect.gen(function*() {
    const cpu = process.cpuUsage()
    const user = (cpu.user - counted.user) / MICROS_PER_SECOND
    const system = (cpu.system - counted.system) / MICROS_PER_SECOND
    counted = cpu
    yield* Metric.update(cpuUser, user)
    yield* Metric.update(cpuSystem, system)
    yield* Metric.update(cpuTotal, user + system)
    const memory = process.memoryUsage()
    yield* Metric.update(residentMemory, memory.rss)
    yield* Metric.update(heapTotal, memory.heapTotal)
    yield* Metric.update(heapUsed, memory.heapUsed)
    yield* Metric.update(externalMemory, memory.external)
    yield* Metric.update(lag, yield* currentLag)
    // Scrapes closer together than the 10 ms resolution find no samples; the last window stands.
    if (delay.count > 0) {
      yield* Metric.update(lagMin, delay.min / NANOS_PER_SECOND)
      yield* Metric.update(lagMax, delay.max / NANOS_PER_SECOND)
      yield* Metric.update(lagMean, delay.mean / NANOS_PER_SECOND)
      yield* Metric.update(lagStddev, delay.stddev / NANOS_PER_SECOND)
      yield* Metric.update(lagP50, delay.percentile(50) / NANOS_PER_SECOND)
      yield* Metric.update(lagP90, delay.percentile(90) / NANOS_PER_SECOND)
      yield* Metric.update(lagP99, delay.percentile(99) / NANOS_PER_SECOND)
      delay.reset()
    }
  })
})
