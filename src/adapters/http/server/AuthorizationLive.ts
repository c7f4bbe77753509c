import { Effect, Layer, Option, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { Unauthorized } from "../../../domain/Errors.ts"
import { ApiKeys } from "../../../ports/ApiKeys.ts"
import { Authorization, CurrentCaller } from "../api/Authorization.ts"
import { toHttpError } from "./HttpErrors.ts"
import * as RequestRateLimit from "./RequestRateLimit.ts"

/**
 * Checks the bearer key of every /v1 request against the ApiKeys port, applies the rate
 * limits (RequestRateLimit) and provides its caller.
 */
export const layer: Layer.Layer<Authorization, never, ApiKeys> = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const rateLimit = yield* RequestRateLimit.make
    return Authorization.of({
      bearerAuth: Effect.fn("Authorization.bearerAuth")(function*(httpEffect, { credential }) {
        const request = yield* HttpServerRequest.HttpServerRequest
        // A header that is present but unusable (wrong scheme, empty) counts as an invalid token.
        const sent = request.headers["authorization"] !== undefined
        if (!sent) return yield* rateLimit.refuse(Effect.fail(toHttpError(new Unauthorized({ credential: "missing" }))))
        const caller = Redacted.value(credential) === "" ? Option.none() : yield* keys.verify(credential)
        if (Option.isNone(caller)) {
          return yield* rateLimit.refuse(Effect.fail(toHttpError(new Unauthorized({ credential: "invalid" }))))
        }
        return yield* rateLimit.admit(caller.value, Effect.provideService(httpEffect, CurrentCaller, caller.value))
      })
    })
  })
)
