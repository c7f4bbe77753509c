/**
 * The rate-limit step of authentication (BearerCheck): a verified caller draws from its
 * key's bucket, a request without a valid key from its client address's bucket. Past either, the answer is 429 `rate_limited`
 * with `Retry-After` and the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers:
 * `RateLimit-Policy: "key";q=200;w=2`, `RateLimit: "key";r=0;t=1`) instead of the
 * handler's response or the 401. Answers to verified callers carry the two fields too, so
 * a client can slow down before it is refused; error answers (400, 403, 404, 409, 503 …)
 * carry them as successes do. Without a RateLimits service nothing is
 * limited and nothing is added.
 */
import { Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type { Caller } from "../../../../domain/keys/Caller.ts"
import type { RateLimitDecision, RateLimitPolicy, RateLimitSubject } from "../../../../ports/ratelimits/RateLimits.ts"
import { RateLimits } from "../../../../ports/ratelimits/RateLimits.ts"
import { RateLimited } from "../../api/ApiErrors.ts"
import { clientBucketOf } from "../process/ClientAddress.ts"
import { errorResponse } from "./ErrorResponses.ts"

/** The step, as authentication uses it. */
export interface RequestRateLimit {
  /** Runs `handler` for a verified caller unless its key's bucket is empty. */
  readonly admit: <E, R>(
    caller: Caller,
    handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  /** Runs `refusal` (the 401) for a request without a valid key unless its address's bucket is empty. */
  readonly refuse: <E, R>(
    refusal: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>
}

const unlimited: RequestRateLimit = {
  admit: (_caller, handler) => handler,
  refuse: (refusal) => refusal
}

// An sf-string item with its parameters: "key";q=200;w=2
const policyField = (policy: RateLimitPolicy) => `"${policy.name}";q=${policy.quota};w=${policy.windowSeconds}`

const WHOSE: Record<RateLimitSubject, string> = {
  key: "with this API key",
  address: "without a valid API key from this address"
}

/** The step over the RateLimits service in context, if any; made once per layer, not per request. */
export const make: Effect.Effect<RequestRateLimit> = Effect.map(Effect.serviceOption(RateLimits), (service) => {
  if (Option.isNone(service)) return unlimited
  const limits = service.value
  const policyFields = {
    key: policyField(limits.policies.key),
    address: policyField(limits.policies.address)
  }
  const fields = (subject: RateLimitSubject, decision: RateLimitDecision) => ({
    "ratelimit-policy": policyFields[subject],
    ratelimit: `"${decision.policy.name}";r=${decision.remaining};t=${decision.retryAfterSeconds}`
  })
  const limited = (subject: RateLimitSubject, decision: RateLimitDecision) =>
    errorResponse(
      new RateLimited({
        message: `too many requests ${WHOSE[subject]}; retry after ${decision.retryAfterSeconds} s`
      }),
      { ...fields(subject, decision), "retry-after": String(decision.retryAfterSeconds) }
    )

  return {
    admit: (caller, handler) =>
      Effect.flatMap(limits.consume("key", caller.keyId), (decision) => {
        if (decision === undefined) return handler
        if (!decision.allowed) return Effect.succeed(limited("key", decision))
        const headers = fields("key", decision)
        return Effect.map(handler, (response) => HttpServerResponse.setHeaders(response, headers))
      }),
    refuse: (refusal) =>
      HttpServerRequest.HttpServerRequest.use((request) =>
        Effect.flatMap(limits.consume("address", clientBucketOf(request)), (decision) =>
          decision === undefined || decision.allowed ? refusal : Effect.succeed(limited("address", decision))))
  }
})
