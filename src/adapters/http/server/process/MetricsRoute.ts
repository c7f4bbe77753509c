/**
 * `GET /metrics`: every metric of the process in the Prometheus text format, through
 * effect's PrometheusMetrics, with the process figures sampled at scrape time. Scraping
 * needs no key and costs one pass over the registry.
 */
import { Effect, Metric } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { monitorEventLoopDelay } from "node:perf_hooks"

/** Where the metrics are served. */
export const METRICS_PATH = "/metrics"

const residentMemory = Metric.gauge("process_resident_memory_bytes", {
  description: "Resident memory of the process, in bytes."
})
const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "V8 heap in use, in bytes." })
const eventLoopDelay = (quantile: "p50" | "p99" | "max") =>
  Metric.gauge(`nodejs_eventloop_delay_${quantile}_seconds`, {
    description: `Event-loop delay since the previous scrape, ${quantile === "max" ? "maximum" : quantile}, in seconds.`
  })
const delayP50 = eventLoopDelay("p50")
const delayP99 = eventLoopDelay("p99")
const delayMax = eventLoopDelay("max")

const NANOS_PER_SECOND = 1e9

export const layer = HttpRouter.use(Effect.fn(function*(router) {
  // Sampled every 10 ms while the routes exist; each scrape reports the window since the last one.
  const delay = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const histogram = monitorEventLoopDelay({ resolution: 10 })
      histogram.enable()
      return histogram
    }),
    (histogram) => Effect.sync(() => histogram.disable())
  )
  yield* router.add(
    "GET",
    METRICS_PATH,
    Effect.gen(function*() {
      const memory = process.memoryUsage()
      yield* Metric.update(residentMemory, memory.rss)
      yield* Metric.update(heapUsed, memory.heapUsed)
      yield* Metric.update(delayP50, delay.percentile(50) / NANOS_PER_SECOND)
      yield* Metric.update(delayP99, delay.percentile(99) / NANOS_PER_SECOND)
      yield* Metric.update(delayMax, delay.max / NANOS_PER_SECOND)
      delay.reset()
      return HttpServerResponse.text(yield* PrometheusMetrics.format(), {
        contentType: "text/plain; version=0.0.4; charset=utf-8"
      })
    })
  )
}))
