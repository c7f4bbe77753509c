import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SUNSET } from "../api/Sunset.ts"
import { pathOf, type RouteTable } from "./RouteTable.ts"

/** The deprecated getPet route. */
const DEPRECATED_ROUTE = "/v1/pets/:petId"

/**
 * Adds `Deprecation`, `Sunset` and the successor `Link` to every response of the
 * deprecated route: successes and errors (401, 404, 410) alike, which a handler alone
 * cannot reach.
 */
export const layer = (routes: RouteTable) =>
  HttpRouter.middleware(
    (app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const response = yield* app
        return routes.match(request.method, pathOf(request.url)) === DEPRECATED_ROUTE
          ? HttpServerResponse.setHeaders(response, {
            deprecation: SUNSET.deprecation,
            sunset: SUNSET.httpDate,
            link: SUNSET.successorLink
          })
          : response
      }),
    { global: true }
  )
