import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { Caller } from "../../../domain/keys/Caller.ts"
import { UnauthorizedResponse } from "./ApiErrors.ts"

/** The caller of the request being served, as its verified key identifies it. */
export class CurrentCaller extends Context.Service<CurrentCaller, Caller>()("animal-store/http/CurrentCaller") {}

/**
 * Bearer API-key authentication for every /v1 operation. The security key names the
 * OpenAPI scheme `bearerAuth`. HttpApi runs middleware before it decodes the request,
 * so a request without a key is a 401 even when its body is malformed.
 */
export class Authorization extends HttpApiMiddleware.Service<Authorization, {
  provides: CurrentCaller
}>()("animal-store/http/Authorization", {
  security: { bearerAuth: HttpApiSecurity.bearer },
  error: UnauthorizedResponse
}) {}
