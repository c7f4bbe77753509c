/**
 * What every request of the service gets on its way in and out, in one global router
 * middleware (one step per request rather than one per policy): its route, looked up
 * once; its id (`X-Request-Id`, the client's own when sane), on the response, on every
 * log line the request writes and on its trace span; the JSON error policy
 * (ErrorResponses) and the deprecation headers (SunsetHeaders); CORS when configured;
 * the headers every response carries; its metrics; and its one request log line, at warn
 * (503) or error (other 5xx) with the cause its Error body states.
 */
import { Effect, Predicate, References } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { CACHE_CONTROL, X_CONTENT_TYPE_OPTIONS } from "./CommonHeaders.ts"
import * as Cors from "./Cors.ts"
import * as ErrorResponses from "./ErrorResponses.ts"
import * as HttpMetrics from "./HttpMetrics.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "./RequestId.ts"
import { pathOf, type RouteTable } from "../routing/RouteTable.ts"
import * as SunsetHeaders from "./SunsetHeaders.ts"

/** The metrics label of a request no route serves: raw paths would make unbounded series. */
export const UNMATCHED = "unmatched"

/** The log span of a request line, whose duration is the request's. */
const REQUEST_SPAN = "http.span"

/** What a request's log line says. */
export interface RequestLine {
  readonly method: string
  /** Without the query string, which can carry what does not belong in logs. */
  readonly path: string
  readonly status: number
  readonly route: string
  readonly requestId: string
  /** The cause the Error body of a 5xx states. */
  readonly errorMessage?: string | undefined
}

/**
 * A request's one log line: info below 500, warn for a 503, error for other 5xx with
 * the cause its Error body states. The only writer of request lines, for the answers of
 * the application and of the HTTP server alike.
 */
export const logRequest = (line: RequestLine): Effect.Effect<void> => {
  const annotations = {
    "http.method": line.method,
    "http.url": line.path,
    "http.status": line.status,
    "http.route": line.route,
    "request.id": line.requestId
  }
  return line.status < 500
    ? Effect.logInfo("Sent HTTP response").pipe(Effect.annotateLogs(annotations))
    : Effect.logWithLevel(line.status === 503 ? "Warn" : "Error")("Sent HTTP response").pipe(
      Effect.annotateLogs({ ...annotations, "error.message": line.errorMessage ?? "(no message)" })
    )
}

/** {@link logRequest} for a request that arrived at `startedAt` (epoch ms) and was answered outside an Effect. */
export const logRequestSince = (line: RequestLine, startedAt: number): Effect.Effect<void> =>
  Effect.provideService(logRequest(line), References.CurrentLogSpans, [[REQUEST_SPAN, startedAt]])

const withResponseHeaders = (response: HttpServerResponse.HttpServerResponse, requestId: string) =>
  HttpServerResponse.setHeaders(
    response,
    response.headers["cache-control"] === undefined
      ? { [REQUEST_ID_HEADER]: requestId, "x-content-type-options": X_CONTENT_TYPE_OPTIONS, "cache-control": CACHE_CONTROL }
      : { [REQUEST_ID_HEADER]: requestId, "x-content-type-options": X_CONTENT_TYPE_OPTIONS }
  )

/**
 * The cause a 5xx states in its Error body ("the database is unavailable: ConnectionError"),
 * for its log line: written by this service, it never holds the key or the request body.
 */
const errorMessageOf = (response: HttpServerResponse.HttpServerResponse): string => {
  if (response.body._tag !== "Uint8Array") return "(no body)"
  try {
    const body: unknown = JSON.parse(new TextDecoder().decode(response.body.body))
    return Predicate.hasProperty(body, "message") && typeof body.message === "string" ? body.message : "(no message)"
  } catch {
    return "(not an Error body)"
  }
}

/** What the middleware adds besides telemetry. */
export interface Options {
  /** Origins allowed to call from a browser; none when undefined (no CORS headers, OPTIONS is a 405). */
  readonly cors?: Cors.CorsOrigins | undefined
}

export const layer = (routes: RouteTable, options?: Options) => {
  const cors = options?.cors === undefined ? undefined : Cors.middleware(options.cors)
  return HttpRouter.middleware(
    (app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const started = performance.now()
        const path = pathOf(request.url)
        const route = routes.match(request.method, path)
        const requestId = requestIdFor(request.headers[REQUEST_ID_HEADER])
        yield* Effect.annotateCurrentSpan("http.request.id", requestId)
        const answered = ErrorResponses.answer(app, request, path, route, routes)
        const served = yield* (cors === undefined ? answered : cors(answered)).pipe(
          Effect.annotateLogs("request.id", requestId)
        )
        // Every answer of the deprecated route says so, its errors (defects included) too.
        const response = SunsetHeaders.isDeprecated(route) ? SunsetHeaders.add(served) : served
        const seconds = (performance.now() - started) / 1000
        HttpMetrics.recordRequest(route?.operation ?? UNMATCHED, request.method, response.status, seconds)
        yield* logRequest({
          method: request.method,
          path,
          status: response.status,
          route: route?.pattern ?? UNMATCHED,
          requestId,
          errorMessage: response.status < 500 ? undefined : errorMessageOf(response)
        })
        return withResponseHeaders(response, requestId)
      }).pipe(Effect.withLogSpan(REQUEST_SPAN)),
    { global: true }
  )
}
