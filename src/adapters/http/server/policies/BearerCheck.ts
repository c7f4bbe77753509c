/**
 * Authentication's rules, as ApiRouter applies them wherever an endpoint declares the
 * Authorization middleware: without an `Authorization` header the credential is
 * `missing`; one that names no key (another scheme, empty, unknown, expired, revoked) is
 * `invalid`; the rate limits (RequestRateLimit) apply to every outcome. No input is
 * looked at for an unknown caller.
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

const BEARER = "bearer"

/**
 * The credential of an `Authorization: Bearer <credential>` field, or `undefined` for
 * another scheme or none: the scheme is case-insensitive and the credential follows one
 * or more spaces (RFC 9110, section 11.1), as HttpApiSecurity.bearer reads it. Read here,
 * without an effect of its own, because every request with a key pays for it.
 */
export const bearerCredential = (field: string): string | undefined => {
  if (field.length <= BEARER.length || field.charCodeAt(BEARER.length) !== 32) return undefined
  if (field.slice(0, BEARER.length).toLowerCase() !== BEARER) return undefined
  let start = BEARER.length + 1
  while (field.charCodeAt(start) === 32) start++
  return start === field.length ? undefined : field.slice(start)
}

/**
 * The check over the ApiKeys and RateLimits services, made once per layer. `field` is
 * the request's `Authorization` header, `undefined` when it has none.
 */
export const make = Effect.gen(function*() {
  const keys = yield* ApiKeys
  const rateLimit = yield* RequestRateLimit.make
  return <RefusedError, E, R>(
    field: string | undefined,
    answers: Answers<RefusedError, E, R>
  ): Effect.Effect<Response, RefusedError | E, R | HttpServerRequest.HttpServerRequest> => {
    const refuse = (
      credential: Unauthorized["credential"]
    ): Effect.Effect<Response, RefusedError | E, R | HttpServerRequest.HttpServerRequest> =>
      rateLimit.refuse(answers.refused(new Unauthorized({ credential })))
    if (field === undefined) return refuse("missing")
    const credential = bearerCredential(field)
    if (credential === undefined) return refuse("invalid")
    return Effect.flatMap(keys.verify(Redacted.make(credential)), (caller) =>
      Option.isNone(caller)
        ? refuse("invalid")
        : rateLimit.admit(caller.value, answers.admitted(caller.value)))
  }
})
