/**
 * What every request of the service gets on its way in and out, in one global router
 * middleware (one step per request rather than one per policy): its route, looked up
 * once; its id (`X-Request-Id`, the client's own when sane), on the response, on every
 * log line the request writes and on its trace span; the JSON error policy
 * (ErrorResponses) and the deprecation headers (SunsetHeaders); CORS when configured;
 * the headers every response carries; its metrics; and its one request log line, at warn
 * (503) or error (other 5xx) with the cause its Error body states.
 */
import { Context, Effect, Predicate } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { CACHE_CONTROL, X_CONTENT_TYPE_OPTIONS } from "./CommonHeaders.ts"
import * as Cors from "./Cors.ts"
import * as ErrorResponses from "./ErrorResponses.ts"
import * as HttpMetrics from "./HttpMetrics.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "./RequestId.ts"
import { pathOf, type RouteTable } from "../routing/RouteTable.ts"
import * as SunsetHeaders from "./SunsetHeaders.ts"
import * as Spans from "../../../observability/Spans.ts"

/** The metrics label of a request no route serves: raw paths would make unbounded series. */
export const UNMATCHED = "unmatched"

/** The message of every request line, pino-http's. */
export const REQUEST_MESSAGE = "request completed"

/** What a request's log line says. */
export interface RequestLine {
  readonly method: string
  /** Without the query string, which can carry what does not belong in logs. */
  readonly path: string
  readonly status: number
  readonly route: string
  readonly requestId: string
  /** The cause the Error body of a 5xx states. */
  readonly error?: ResponseError | undefined
}

/** A 5xx's Error body: its code and message. */
export interface ResponseError {
  readonly type: string
  readonly message: string
}

/**
 * A request's one log line, in pino-http's fields (`reqId`, `req`, `res`, `responseTime`
 * in whole milliseconds, `err`): info below 500, warn for a 503, error for other 5xx with
 * the cause its Error body states. The only writer of request lines, for the answers of
 * the application and of the HTTP server alike.
 */
export const logRequest = (line: RequestLine, responseTimeMs: number): Effect.Effect<void> => {
  const fields = {
    reqId: line.requestId,
    req: { method: line.method, url: line.path },
    res: { statusCode: line.status },
    route: line.route,
    responseTime: Math.round(responseTimeMs)
  }
  // The fields as pino's merging object, not as log annotations: providing annotations
  // costs the request two more steps of the runtime.
  return line.status < 500
    ? Effect.logInfo(fields, REQUEST_MESSAGE)
    : Effect.logWithLevel(line.status === 503 ? "Warn" : "Error")(
      { ...fields, err: line.error ?? { type: "unknown", message: "(no message)" } },
      REQUEST_MESSAGE
    )
}

/** {@link logRequest} for a request that arrived at `startedAt` (epoch ms) and was answered outside an Effect. */
export const logRequestSince = (line: RequestLine, startedAt: number): Effect.Effect<void> =>
  Effect.suspend(() => logRequest(line, Date.now() - startedAt))

/** The headers every answer gets, and a deprecated route's, in one copy of the response's headers. */
const withResponseHeaders = (
  response: HttpServerResponse.HttpServerResponse,
  requestId: string,
  deprecated: boolean
) => {
  const headers: Record<string, string> = deprecated ? { ...SunsetHeaders.HEADERS } : {}
  headers[REQUEST_ID_HEADER] = requestId
  headers["x-content-type-options"] = X_CONTENT_TYPE_OPTIONS
  if (response.headers["cache-control"] === undefined) headers["cache-control"] = CACHE_CONTROL
  return HttpServerResponse.setHeaders(response, headers)
}

/**
 * The cause a 5xx states in its Error body ("the database is unavailable: ConnectionError"),
 * for its log line: written by this service, it never holds the key or the request body.
 */
const errorOf = (response: HttpServerResponse.HttpServerResponse): ResponseError => {
  if (response.body._tag !== "Uint8Array") return { type: "unknown", message: "(no body)" }
  try {
    const body: unknown = JSON.parse(new TextDecoder().decode(response.body.body))
    return {
      type: Predicate.hasProperty(body, "code") && typeof body.code === "string" ? body.code : "unknown",
      message: Predicate.hasProperty(body, "message") && typeof body.message === "string" ? body.message : "(no message)"
    }
  } catch {
    return { type: "unknown", message: "(not an Error body)" }
  }
}

/** What the middleware adds besides telemetry. */
export interface Options {
  /** Origins allowed to call from a browser; none when undefined (no CORS headers, OPTIONS is a 405). */
  readonly cors?: Cors.CorsOrigins | undefined
  /** Whether requests are recorded in the HTTP metrics (no one reads them when /metrics is off). Default: true. */
  readonly metrics?: boolean | undefined
}

export const layer = (routes: RouteTable, options?: Options) => {
  const cors = options?.cors === undefined ? undefined : Cors.middleware(options.cors)
  const metrics = options?.metrics ?? true
  return HttpRouter.middleware(
    // Written as few effects as it can be: each step of the runtime here is paid by every request.
    (app) =>
      Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const started = performance.now()
        const path = pathOf(request.url)
        const route = routes.match(request.method, path)
        const requestId = requestIdFor(request.headers[REQUEST_ID_HEADER])
        const answered = ErrorResponses.answer(app, request, path, route, routes)
        const served = Effect.flatMap(
          Effect.annotateLogs(cors === undefined ? answered : cors(answered), "reqId", requestId),
          (response) => {
            const elapsedMs = performance.now() - started
            if (metrics) {
              HttpMetrics.recordRequest(route?.operation ?? UNMATCHED, request.method, response.status, elapsedMs / 1000)
            }
            // Every answer of the deprecated route says so, its errors (defects included) too.
            const answer = withResponseHeaders(response, requestId, SunsetHeaders.isDeprecated(route))
            return Effect.map(
              logRequest({
                method: request.method,
                path,
                status: response.status,
                route: route?.pattern ?? UNMATCHED,
                requestId,
                error: response.status < 500 ? undefined : errorOf(response)
              }, elapsedMs),
              // A map, not `as`: the answer passes on in the same step.
              () => answer
            )
          }
        )
        // The span exists only when a tracer exports it (Spans).
        return Spans.observed(fiber)
          ? Effect.andThen(Effect.annotateCurrentSpan("http.request.id", requestId), served)
          : served
      }),
    { global: true }
  )
}
