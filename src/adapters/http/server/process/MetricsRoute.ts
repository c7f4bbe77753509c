/**
 * `GET /metrics`: every metric of the process in the Prometheus text format, through
 * effect's PrometheusMetrics, with the process figures sampled at scrape time. Scraping
 * needs no key and costs one pass over the registry.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import * as ProcessMetrics from "../../../observability/ProcessMetrics.ts"

/** Where the metrics are served. */
export const METRICS_PATH = "/metrics"

export const layer = HttpRouter.use(Effect.fn(function*(router) {
  // The process series are watched while the routes exist.
  const sampleProcess = yield* ProcessMetrics.start()
  yield* router.add(
    "GET",
    METRICS_PATH,
    Effect.gen(function*() {
      yield* sampleProcess
      return HttpServerResponse.text(yield* PrometheusMetrics.format(), {
        contentType: "text/plain; version=0.0.4; charset=utf-8"
      })
    })
  )
}))
