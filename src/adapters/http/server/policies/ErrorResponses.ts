import { ByteSize, Cause, Effect, type Types } from "effect"
import {
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "effect/http"
import { Internal, MethodNotAllowed, NotFound, PayloadTooLarge, ServiceUnavailable } from "../../api/ApiErrors.ts"
import { unsupportedMediaType } from "../../api/JsonContentType.ts"
import type { Route, RouteTable } from "../routing/RouteTable.ts"

/**
 * Largest request body accepted; larger ones get 413 before they are fully read. A pet
 * is small: the largest valid create (a 255-character name of astral characters, every
 * character and key written as `\u` escapes, the longest int64 and status) is about
 * 3.3 KB, and 4 KiB leaves room for whitespace and an ignored `id`. A tight bound also
 * bounds what a hostile body can cost the parser.
 */
export const MAX_BODY_BYTES = 4 * 1024

/** {@link MAX_BODY_BYTES} as the `HttpIncomingMessage.MaxBodySize` of a body read. */
export const MAX_BODY_SIZE = ByteSize.bytes(MAX_BODY_BYTES)
const tooLarge = new PayloadTooLarge({ message: `the request body exceeds ${MAX_BODY_BYTES} bytes` })

/** An error as its JSON response: the `{code, message, status}` body and that status. */
export const errorResponse = (
  error: { readonly code: string; readonly message: string; readonly status: number },
  headers?: Record<string, string>
) =>
  HttpServerResponse.jsonUnsafe(
    { code: error.code, message: error.message, status: error.status },
    { status: error.status, ...(headers === undefined ? {} : { headers }) }
  )

// A path named in a message is cut short: an error body should not echo kilobytes back.
const SHOWN_PATH_LENGTH = 200
const shown = (path: string) => path.length <= SHOWN_PATH_LENGTH ? path : `${path.slice(0, SHOWN_PATH_LENGTH)}…`

const isJsonResponse = (response: HttpServerResponse.HttpServerResponse) =>
  (response.headers["content-type"] ?? "").includes("json")

// Headers of a framework response that still matter once its body is replaced.
const KEPT_HEADERS = ["allow", "connection", "www-authenticate"] as const

/** Gives a framework-made error response (empty or text/plain) the documented JSON body. */
const toJsonError = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) => {
  if (response.status < 400 || isJsonResponse(response)) return response
  const kept: Record<string, string> = {}
  for (const name of KEPT_HEADERS) {
    const value = response.headers[name]
    if (value !== undefined) kept[name] = value
  }
  switch (response.status) {
    case 413:
      return errorResponse(tooLarge, kept)
    case 415:
      return errorResponse(unsupportedMediaType(request.headers["content-type"]), kept)
    default:
      return response.status >= 500
        ? errorResponse(new Internal({ message: "internal error" }), kept)
        : errorResponse({ code: "invalid_request", message: "the request is malformed", status: response.status }, kept)
  }
}

/** The answer to a request a shutdown will not serve, wherever the shutdown meets it. */
export const SHUTTING_DOWN = {
  error: new ServiceUnavailable({ message: "the service is shutting down; retry" }),
  headers: { connection: "close", "retry-after": "1" }
} as const

/**
 * Interrupted, and not because its client went away: a shutdown whose drain ended first
 * (HttpServerError.causeResponse makes it an empty 503, which would pass for a defect).
 */
const isServerInterrupt = (cause: Cause.Cause<unknown>) =>
  Cause.hasInterruptsOnly(cause) &&
  !cause.reasons.some((reason) => reason._tag === "Interrupt" && reason.annotations.has(HttpServerError.ClientAbort.key))

const isRouteNotFound = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some((reason) =>
    reason._tag === "Fail" && HttpServerError.isHttpServerError(reason.error) &&
    reason.error.reason._tag === "RouteNotFound"
  )

/**
 * Makes every error the service can answer, including those the framework produces
 * itself (unknown route, wrong method, oversized or non-JSON body, defects), carry the
 * `{code, message, status}` body. Defects are logged with their cause and answered
 * without internals; a request the shutdown interrupts gets the 503 of one that came too
 * late, to retry elsewhere. Paths that belong to a host application mounting these routes
 * next to its own are left alone, body limit included; only a request that no route
 * serves at all gets the JSON 404. `route` is the service's route serving the request.
 */
export const answer = (
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest>,
  request: HttpServerRequest.HttpServerRequest,
  path: string,
  route: Route | undefined,
  routes: RouteTable
): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest> => {
  // The scan over every method only for requests no route serves.
  if (route === undefined && routes.allowed(path).length === 0) {
    return app.pipe(
      Effect.catchCause((cause) =>
        isRouteNotFound(cause)
          ? Effect.succeed(errorResponse(new NotFound({ message: `no route for ${request.method} ${shown(path)}` })))
          : Effect.failCause(cause)
      )
    )
  }
  // A declared length over the limit is refused before a byte of the body is read; an
  // upload's route bounds its bytes with its own limit (ApiRouter).
  if (route?.rawBody !== true && Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
    return Effect.succeed(errorResponse(tooLarge, { connection: "close" }))
  }
  return app.pipe(
    Effect.catchCause((cause) => {
      if (isRouteNotFound(cause)) {
        const allowed = routes.allowed(path)
        return Effect.succeed(errorResponse(
          new MethodNotAllowed({
            message: `${request.method} is not allowed on ${shown(path)}; use ${allowed.join(", ")}`
          }),
          { allow: allowed.join(", ") }
        ))
      }
      if (isServerInterrupt(cause)) {
        return Effect.succeed(errorResponse(SHUTTING_DOWN.error, SHUTTING_DOWN.headers))
      }
      return Effect.flatMap(HttpServerError.causeResponse(cause), ([response]) =>
        response.status >= 500 ? Effect.as(Effect.logError("request failed", cause), response) : Effect.succeed(response))
    }),
    Effect.map((response) => toJsonError(request, response))
  )
}
