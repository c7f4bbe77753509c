import { SUNSET } from "../../api/Sunset.ts"
import type { Route } from "../routing/RouteTable.ts"

/** Whether responses of `route` carry the deprecation headers: its endpoint is annotated `deprecated`. */
export const isDeprecated = (route: Route | undefined): boolean => route?.deprecated === true

/**
 * `Deprecation`, `Sunset` and the successor `Link`, on every response of a deprecated
 * route: successes and errors (401, 404, 410) alike, which a handler alone cannot reach.
 */
export const HEADERS: Readonly<Record<string, string>> = {
  deprecation: SUNSET.deprecation,
  sunset: SUNSET.httpDate,
  link: SUNSET.successorLink
}
