import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import type { ApiKeys } from "../../../ports/ApiKeys.ts"
import { Authorization, CurrentCaller } from "../api/Authorization.ts"
import * as BearerCheck from "./BearerCheck.ts"
import { toHttpError } from "./HttpErrors.ts"

/**
 * Checks the bearer key of every /v1 request (BearerCheck, with the rate limits) and
 * provides its caller; a refusal fails with the HttpApi error that encodes the 401.
 */
export const layer: Layer.Layer<Authorization, never, ApiKeys> = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const check = yield* BearerCheck.make
    return Authorization.of({
      bearerAuth: Effect.fn("Authorization.bearerAuth")(function*(httpEffect, { credential }) {
        const request = yield* HttpServerRequest.HttpServerRequest
        // A header that is present but unusable (wrong scheme, empty) counts as an invalid token.
        return yield* check(request.headers["authorization"] === undefined ? undefined : credential, {
          refused: (error) => Effect.fail(toHttpError(error)),
          admitted: (caller) => Effect.provideService(httpEffect, CurrentCaller, caller)
        })
      })
    })
  })
)
