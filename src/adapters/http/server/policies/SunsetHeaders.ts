import { HttpServerResponse } from "effect/http"
import { SUNSET } from "../../api/Sunset.ts"
import type { Route } from "../routing/RouteTable.ts"

/** Whether responses of `route` carry the deprecation headers: its endpoint is annotated `deprecated`. */
export const isDeprecated = (route: Route | undefined): boolean => route?.deprecated === true

/**
 * Adds `Deprecation`, `Sunset` and the successor `Link` to a response of a deprecated
 * route: successes and errors (401, 404, 410) alike, which a handler alone cannot reach.
 */
export const add = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.setHeaders(response, {
    deprecation: SUNSET.deprecation,
    sunset: SUNSET.httpDate,
    link: SUNSET.successorLink
  })
