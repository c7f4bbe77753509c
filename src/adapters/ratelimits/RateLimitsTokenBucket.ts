import { Duration, Effect, Layer } from "effect"
import { RateLimiter } from "effect/persistence"
import type { RateLimitDecision, RateLimitHealth, RateLimitPolicy, RateLimitSubject } from "../../ports/RateLimits.ts"
import { RateLimits } from "../../ports/RateLimits.ts"

/** The policies, and how long the bucket store may take. */
export interface Options {
  readonly policies: { readonly [S in RateLimitSubject]: RateLimitPolicy }
  /**
   * Longest wait for the store (a remote one); past it the request goes on unlimited, as
   * when the store refuses. None: wait as long as it takes (the memory store never waits).
   */
  readonly timeout?: Duration.Input | undefined
}

// The probe that tells /readyz the store answers again; its bucket is never empty.
const PROBE = { algorithm: "token-bucket", key: "health:probe", limit: 1_000_000, window: "1 second" } as const

const seconds = (millis: number) => Math.max(0, Math.ceil(millis / 1000))

/**
 * Token buckets on effect's RateLimiter, over whichever RateLimiterStore it is given: the
 * memory store for one instance, the Redis store to share the buckets between instances.
 * A store failure lets the request through: it is logged once when the outage starts and
 * once when it ends, not per request, and `health` names it meanwhile.
 */
export const layer = (options: Options): Layer.Layer<RateLimits, never, RateLimiter.RateLimiter> =>
  Layer.effect(
    RateLimits,
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.RateLimiter
      const { policies } = options
      // What does not change per request is made once.
      const settings = {
        key: bucketOf(policies.key),
        address: bucketOf(policies.address)
      }
      let outage: string | undefined

      const guarded = <A>(effect: Effect.Effect<A, RateLimiter.RateLimiterError>) =>
        options.timeout === undefined ? effect : Effect.timeoutOrElse(effect, {
          duration: options.timeout,
          orElse: () =>
            Effect.fail(
              new RateLimiter.RateLimiterError({
                reason: new RateLimiter.RateLimitStoreError({
                  message: `no answer within ${Duration.format(Duration.fromInputUnsafe(options.timeout!))}`
                })
              })
            )
        })

      const storeFailed = (error: RateLimiter.RateLimitStoreError) =>
        Effect.suspend(() => {
          const started = outage === undefined
          outage = describe(error)
          return started
            ? Effect.logWarning(`Rate limits not applied until the store answers again: ${outage}`)
            : Effect.void
        })

      const storeAnswered = Effect.suspend(() => {
        if (outage === undefined) return Effect.void
        outage = undefined
        return Effect.logInfo("Rate limits applied again: the store answers")
      })

      const consume = (subject: RateLimitSubject, id: string) => {
        const bucket = settings[subject]
        return guarded(limiter.consume({ ...bucket.consume, key: `${subject}:${id}` })).pipe(
          Effect.matchEffect({
            onSuccess: (result): Effect.Effect<RateLimitDecision | undefined> => {
              // After a take the bucket is never full: the next request is regained one refill after the last.
              const missing = Math.ceil(bucket.policy.quota - result.remaining)
              const decision: RateLimitDecision = {
                allowed: true,
                policy: bucket.policy,
                remaining: Math.max(0, Math.floor(result.remaining)),
                retryAfterSeconds: seconds(Duration.toMillis(result.resetAfter) - (missing - 1) * bucket.refillMillis)
              }
              return outage === undefined ? Effect.succeed(decision) : Effect.as(storeAnswered, decision)
            },
            onFailure: (error) =>
              error.reason._tag === "RateLimitExceeded"
                ? Effect.succeed<RateLimitDecision | undefined>({
                  allowed: false,
                  policy: bucket.policy,
                  remaining: 0,
                  retryAfterSeconds: Math.max(1, seconds(Duration.toMillis(error.reason.retryAfter)))
                })
                : Effect.as(storeFailed(error.reason), undefined)
          })
        )
      }

      const ok: RateLimitHealth = { _tag: "Ok" }
      const health = Effect.suspend((): Effect.Effect<RateLimitHealth> =>
        outage === undefined
          ? Effect.succeed(ok)
          : guarded(limiter.consume(PROBE)).pipe(
            Effect.matchEffect({
              onSuccess: () => Effect.as(storeAnswered, ok),
              onFailure: (error): Effect.Effect<RateLimitHealth> =>
                error.reason._tag === "RateLimitStoreError"
                  ? Effect.as(storeFailed(error.reason), { _tag: "Degraded", reason: describe(error.reason) })
                  : Effect.as(storeAnswered, ok)
            })
          )
      )

      return RateLimits.of({ policies, consume, health })
    })
  )

const bucketOf = (policy: RateLimitPolicy) => ({
  policy,
  refillMillis: (policy.windowSeconds * 1000) / policy.quota,
  consume: {
    algorithm: "token-bucket",
    onExceeded: "fail",
    limit: policy.quota,
    window: Duration.seconds(policy.windowSeconds)
  } as const
})

// "Failed to execute tokenBucket rate limiting command: The client is closed"
const describe = (error: RateLimiter.RateLimitStoreError): string => {
  const cause = error.cause as { readonly cause?: unknown; readonly message?: unknown } | undefined
  const inner = cause?.cause instanceof Error ? cause.cause.message : typeof cause?.message === "string" ? cause.message : ""
  return inner === "" ? error.message : `${error.message}: ${inner}`
}
