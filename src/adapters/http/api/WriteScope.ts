import { HttpApiMiddleware } from "effect/http-api"
import { Forbidden } from "./ApiErrors.ts"
import type { CurrentCaller } from "./Authorization.ts"

/**
 * Lets only `write` keys through to an operation that changes the store; a `read` key
 * gets 403. It runs after Authorization and before any input is looked at, so the order
 * of refusals is 401, 403, then 4xx for the input.
 */
export class WriteScope extends HttpApiMiddleware.Service<WriteScope, { requires: CurrentCaller }>()(
  "animal-store/http/WriteScope",
  { error: Forbidden }
) {}
