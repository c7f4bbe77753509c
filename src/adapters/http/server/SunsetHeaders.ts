import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { SUNSET } from "../api/Sunset.ts"
import { MatchedRoute } from "./RequestTelemetry.ts"

/** The deprecated getPet route. */
const DEPRECATED_ROUTE = "/v1/pets/:petId"

/**
 * Adds `Deprecation`, `Sunset` and the successor `Link` to every response of the
 * deprecated route: successes and errors (401, 404, 410) alike, which a handler alone
 * cannot reach.
 */
export const layer = HttpRouter.middleware(
  (app) =>
    Effect.gen(function*() {
      const response = yield* app
      return (yield* MatchedRoute)?.pattern === DEPRECATED_ROUTE
        ? HttpServerResponse.setHeaders(response, {
          deprecation: SUNSET.deprecation,
          sunset: SUNSET.httpDate,
          link: SUNSET.successorLink
        })
        : response
    }),
  { global: true }
)
