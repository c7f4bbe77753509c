/**
 * Authentication's rules, as ApiRouter applies them wherever an endpoint declares the
 * Authorization middleware: without an `Authorization` header the credential is
 * `missing`; one that names no key (empty, unknown, expired, revoked) is `invalid`; the
 * rate limits (RequestRateLimit) apply to every outcome. No input is looked at for an unknown caller.
 */
import { Effect, Option, Redacted } from "effect"
import type { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Unauthorized } from "../../../../domain/Errors.ts"
import type { Caller } from "../../../../domain/keys/Caller.ts"
import { ApiKeys } from "../../../../ports/keys/ApiKeys.ts"
import * as RequestRateLimit from "./RequestRateLimit.ts"

type Response = HttpServerResponse.HttpServerResponse

/** How a path answers each outcome. */
export interface Answers<RefusedError, E, R> {
  readonly refused: (error: Unauthorized) => Effect.Effect<Response, RefusedError>
  readonly admitted: (caller: Caller) => Effect.Effect<Response, E, R>
}

/**
 * The check over the ApiKeys and RateLimits services, made once per layer. `credential`
 * is `undefined` when the request has no `Authorization` header.
 */
export const make = Effect.gen(function*() {
  const keys = yield* ApiKeys
  const rateLimit = yield* RequestRateLimit.make
  return <RefusedError, E, R>(
    credential: Redacted.Redacted | undefined,
    answers: Answers<RefusedError, E, R>
  ): Effect.Effect<Response, RefusedError | E, R | HttpServerRequest.HttpServerRequest> => {
    const refuse = (
      credential: Unauthorized["credential"]
    ): Effect.Effect<Response, RefusedError | E, R | HttpServerRequest.HttpServerRequest> =>
      rateLimit.refuse(answers.refused(new Unauthorized({ credential })))
    if (credential === undefined) return refuse("missing")
    const verified = Redacted.value(credential) === "" ? Effect.succeedNone : keys.verify(credential)
    return Effect.flatMap(verified, (caller) =>
      Option.isNone(caller)
        ? refuse("invalid")
        : rateLimit.admit(caller.value, answers.admitted(caller.value)))
  }
})
