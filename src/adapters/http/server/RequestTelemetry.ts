/**
 * What every request of the service gets on its way in and out, in one global router
 * middleware (the outermost of the service's own): its route, looked up once and shared
 * with the inner middlewares; its id (`X-Request-Id`, the client's own when sane), on the
 * response, on every log line the request writes and on its trace span; its metrics; and
 * its one request log line.
 */
import { Context, Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as HttpMetrics from "./HttpMetrics.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "./RequestId.ts"
import { pathOf, type Route, type RouteTable } from "./RouteTable.ts"

/** The route serving the current request (undefined: no route of the service's, or not looked up yet). */
export const MatchedRoute = Context.Reference<Route | undefined>("animal-store/http/MatchedRoute", {
  defaultValue: () => undefined
})

/** The metrics label of a request no route serves: raw paths would make unbounded series. */
const UNMATCHED = "unmatched"

export const layer = (routes: RouteTable) =>
  HttpRouter.middleware(
    (app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const started = performance.now()
        const path = pathOf(request.url)
        const route = routes.match(request.method, path)
        const requestId = requestIdFor(request.headers[REQUEST_ID_HEADER])
        yield* Effect.annotateCurrentSpan("http.request.id", requestId)
        const response = yield* app.pipe(
          Effect.provideService(MatchedRoute, route),
          Effect.annotateLogs("request.id", requestId)
        )
        const seconds = (performance.now() - started) / 1000
        HttpMetrics.recordRequest(route?.operation ?? UNMATCHED, request.method, response.status, seconds)
        // Query strings can carry what does not belong in logs; the path and route do not.
        yield* Effect.logInfo("Sent HTTP response").pipe(
          Effect.annotateLogs({
            "http.method": request.method,
            "http.url": path,
            "http.status": response.status,
            "http.route": route?.pattern ?? UNMATCHED,
            "request.id": requestId
          })
        )
        return HttpServerResponse.setHeader(response, REQUEST_ID_HEADER, requestId)
      }).pipe(Effect.withLogSpan("http.span")),
    { global: true }
  )
