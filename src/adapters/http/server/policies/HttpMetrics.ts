/**
 * The HTTP server's Prometheus metrics, kept in effect's default metric registry (what
 * `PrometheusMetrics.format` reads). A labelled series is one `Metric` object with fixed
 * attributes; each is made once and reused, so recording a request costs two map lookups.
 */
import { Context, Metric } from "effect"
import { codeOfStatus } from "../../api/ApiErrors.ts"

/** Latency buckets, in seconds: 0.5 ms to 10 s. */
const DURATION_BOUNDARIES = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const memo = <M>(make: (key: string) => M) => {
  const made = new Map<string, M>()
  return (key: string): M => {
    let metric = made.get(key)
    if (metric === undefined) {
      metric = make(key)
      made.set(key, metric)
    }
    return metric
  }
}

const requests = memo((key) => {
  const [operation, method, status] = key.split(" ")
  return Metric.counter("http_server_requests_total", {
    description: "HTTP requests answered, by operation (operationId, or route), method and status.",
    attributes: { operation: operation!, method: method!, status: status! },
    incremental: true
  })
})

const durations = memo((operation) =>
  Metric.histogram("http_server_request_duration_seconds", {
    description: "Time from the request reaching the application to its response, by operation.",
    attributes: { operation },
    boundaries: DURATION_BOUNDARIES
  })
)

const rejections = memo((reason) =>
  Metric.counter("http_server_rejections_total", {
    description: "Requests refused, by reason (the Error body's code), including those the HTTP server answers itself.",
    attributes: { reason },
    incremental: true
  })
)

/** Statuses that count as a rejection: the client or the service's state turned the request away. */
const REJECTED = new Set([401, 403, 408, 413, 415, 417, 429, 431, 503])

/** The registry everything here goes to: effect's default, which no layer of this service replaces. */
const registryContext = Context.empty()

/** Records a refusal, by the code of its status (each error status has one code). */
export const recordRejection = (status: number): void => {
  const code = codeOfStatus(status)
  if (code !== undefined && REJECTED.has(status)) rejections(code).updateUnsafe(1, registryContext)
}

/** Records one answered request. `operation` is an operationId or a route pattern, never a raw path. */
export const recordRequest = (operation: string, method: string, status: number, seconds: number): void => {
  requests(`${operation} ${method} ${status}`).updateUnsafe(1, registryContext)
  durations(operation).updateUnsafe(seconds, registryContext)
  recordRejection(status)
}
