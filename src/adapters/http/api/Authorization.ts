import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { UnauthorizedResponse } from "./ApiErrors.ts"

/**
 * Bearer API-key authentication for every /v1 operation. The security key names the
 * OpenAPI scheme `bearerAuth`. HttpApi runs middleware before it decodes the request,
 * so a request without a key is a 401 even when its body is malformed.
 */
export class Authorization extends HttpApiMiddleware.Service<Authorization>()("animal-store/http/Authorization", {
  security: { bearerAuth: HttpApiSecurity.bearer },
  error: UnauthorizedResponse
}) {}
