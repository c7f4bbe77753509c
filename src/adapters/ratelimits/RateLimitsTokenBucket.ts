import { Cause, Duration, Effect, Exit, Layer, Option } from "effect"
import { CircuitBreaker, RateLimiter } from "effect/persistence"
import type { RateLimitDecision, RateLimitHealth, RateLimitPolicy, RateLimitSubject } from "../../ports/ratelimits/RateLimits.ts"
import { RateLimits } from "../../ports/ratelimits/RateLimits.ts"

/** The policies, and how long the bucket store may take. */
export interface Options {
  readonly policies: { readonly [S in RateLimitSubject]: RateLimitPolicy }
  /**
   * Longest wait for the store (a remote one); past it the request goes on unlimited, as
   * when the store refuses. With a timeout the store is also called through a circuit
   * (CIRCUIT_FAILURES, CIRCUIT_OPEN_FOR). None: wait as long as it takes, no circuit (the
   * memory store never waits nor fails).
   */
  readonly timeout?: Duration.Input | undefined
}

/**
 * Store failures in a row, timeouts included, that open the circuit. One can be a blip (a
 * reconnect, one slow answer); three in a row is a store that is away. Opening wrongly
 * costs at most CIRCUIT_OPEN_FOR unlimited; not opening costs every request the timeout.
 */
export const CIRCUIT_FAILURES = 3

/**
 * How long an open circuit skips the store before one probe asks it again. Requests go on
 * unlimited meanwhile, so the limits return at most this long after the store does; a
 * probe a second keeps what a frozen store leaves unanswered on its connection small.
 */
export const CIRCUIT_OPEN_FOR = Duration.seconds(1)

// The one circuit: every bucket lives in the same store.
const CIRCUIT = "rate-limit-store"

// The probe that tells /readyz the store answers again; its bucket is never empty.
const PROBE = {
  key: "health:probe",
  tokens: 1,
  limit: 1_000_000,
  refillRate: Duration.divideUnsafe(Duration.seconds(1), 1_000_000),
  allowOverflow: false
}

const seconds = (millis: number) => Math.max(0, Math.ceil(millis / 1000))

/**
 * Token buckets on effect's RateLimiter, over whichever RateLimiterStore it is given: the
 * memory store for one instance, the Redis store to share the buckets between instances.
 * A store failure lets the request through: it is logged once when the outage starts and
 * once when it ends, not per request, and `health` names it meanwhile. With a timeout (a
 * remote store), CIRCUIT_FAILURES failures in a row open a circuit: requests then skip the
 * store and go on unlimited at once, until a probe in the background finds it answering.
 */
export const layer = (options: Options): Layer.Layer<RateLimits, never, RateLimiter.RateLimiterStore> =>
  Layer.effect(
    RateLimits,
    Effect.gen(function*() {
      const store = yield* RateLimiter.RateLimiterStore
      const scope = yield* Effect.scope
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

      // The circuit's state is kept in this process: the store it guards is what may be away.
      const breaker = options.timeout === undefined ? undefined : yield* CircuitBreaker.make({
        tripPolicy: CircuitBreaker.consecutive(CIRCUIT_FAILURES),
        openDuration: CIRCUIT_OPEN_FOR
      }).pipe(Effect.provide(CircuitBreaker.layerStoreMemory()))

      // A store call, bounded, and refused at once (CircuitBreakerError) while the circuit is open.
      const ask = <A>(effect: Effect.Effect<A, RateLimiter.RateLimiterError>) =>
        breaker === undefined
          ? guarded(effect)
          : breaker.execute(guarded(effect), { key: CIRCUIT, classify: storeOutcome })

      // Closed without a breaker; the memory store behind the breaker never fails.
      const circuit: Effect.Effect<CircuitBreaker.State> = breaker === undefined
        ? Effect.succeed({ _tag: "Closed", key: CIRCUIT })
        : Effect.orDie(breaker.state(CIRCUIT))

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

      // The store is asked again by one probe at a time, in the background, so that no
      // request and no /readyz waits for a store that has stopped answering. While the
      // circuit is open the breaker refuses the probe; once the open time has passed it is
      // the half-open probe, and its answer closes the circuit or opens it again.
      let probing = false
      const probe = ask(store.tokenBucket(PROBE)).pipe(
        Effect.matchEffect({
          onSuccess: () => storeAnswered,
          onFailure: (error) =>
            error._tag === "CircuitBreakerError"
              ? Effect.void
              : error.reason._tag === "RateLimitStoreError"
              ? storeFailed(error.reason)
              : storeAnswered
        }),
        Effect.ensuring(Effect.sync(() => {
          probing = false
        }))
      )
      const probeIfDue = (state: CircuitBreaker.State) =>
        Effect.suspend(() => {
          if (probing || (state._tag === "Open" && Duration.isPositive(state.retryAfter))) return Effect.void
          probing = true
          return Effect.asVoid(Effect.forkIn(probe, scope))
        })

      // The store's token bucket asked directly, with RateLimiter.consume's arithmetic in plain
      // numbers: no Durations, option spreads or RateLimitExceeded per request. A bucket's
      // request for a key id is made once (key ids are few; client addresses are not kept).
      const keyRequests = new Map<string, TokenBucketRequest>()
      const requestOf = (subject: RateLimitSubject, id: string): TokenBucketRequest => {
        if (subject === "address") return settings.address.request(`address:${id}`)
        let request = keyRequests.get(id)
        if (request === undefined) {
          request = settings.key.request(`key:${id}`)
          keyRequests.set(id, request)
        }
        return request
      }
      const take = (subject: RateLimitSubject, id: string) => {
        const bucket = settings[subject]
        return ask(store.tokenBucket(requestOf(subject, id))).pipe(
          Effect.matchEffect({
            onSuccess: ([remaining, elapsedMillis]): Effect.Effect<RateLimitDecision | undefined> => {
              const { policy, refillMillis } = bucket
              if (remaining < 0) {
                return Effect.succeed({
                  allowed: false,
                  policy,
                  remaining: 0,
                  retryAfterSeconds: Math.max(1, seconds(Math.max(0, Math.ceil(-remaining) * refillMillis - elapsedMillis)))
                })
              }
              // After a take the bucket is never full: the next request is regained one refill after the last.
              const missing = Math.ceil(policy.quota - remaining)
              const resetAfterMillis = Math.max(0, missing * refillMillis - elapsedMillis)
              const decision: RateLimitDecision = {
                allowed: true,
                policy,
                remaining: Math.max(0, Math.floor(remaining)),
                retryAfterSeconds: seconds(resetAfterMillis - (missing - 1) * refillMillis)
              }
              return outage === undefined ? Effect.succeed(decision) : Effect.as(storeAnswered, decision)
            },
            onFailure: (error) =>
              error._tag === "CircuitBreakerError"
                ? Effect.succeed(undefined)
                : error.reason._tag === "RateLimitStoreError"
                ? Effect.as(storeFailed(error.reason), undefined)
                : Effect.succeed(undefined)
          })
        )
      }

      const consume = breaker === undefined ? take : (subject: RateLimitSubject, id: string) =>
        Effect.flatMap(
          circuit,
          (state): Effect.Effect<RateLimitDecision | undefined> =>
            state._tag === "Closed" ? take(subject, id) : Effect.as(probeIfDue(state), undefined)
        )

      // What the store last said; during an outage it also starts a probe, so /readyz
      // notices the store's return without any request.
      const ok: RateLimitHealth = { _tag: "Ok" }
      const health = Effect.suspend((): Effect.Effect<RateLimitHealth> => {
        if (outage === undefined) return Effect.succeed(ok)
        const degraded: RateLimitHealth = { _tag: "Degraded", reason: outage }
        return Effect.as(Effect.flatMap(circuit, probeIfDue), degraded)
      })

      return RateLimits.of({ policies, consume, health })
    })
  )

interface TokenBucketRequest {
  readonly key: string
  readonly tokens: number
  readonly limit: number
  readonly refillRate: Duration.Duration
  readonly allowOverflow: boolean
}

// As RateLimiter.consume computes them for a token bucket of `quota` per window.
const bucketOf = (policy: RateLimitPolicy) => {
  const window = Duration.max(Duration.seconds(policy.windowSeconds), Duration.millis(1))
  const refillRate = Duration.divideUnsafe(window, policy.quota)
  return {
    policy,
    refillMillis: Duration.toMillis(refillRate),
    request: (key: string): TokenBucketRequest => ({ key, tokens: 1, limit: policy.quota, refillRate, allowOverflow: false })
  }
}

// A refusal (limit exceeded) is an answer: only a store error or a timeout counts against the store.
const storeOutcome = (exit: Exit.Exit<unknown, RateLimiter.RateLimiterError>): CircuitBreaker.Outcome =>
  Exit.isSuccess(exit) ||
    Option.exists(Cause.findErrorOption(exit.cause), (error) => error.reason._tag === "RateLimitExceeded")
    ? CircuitBreaker.success
    : CircuitBreaker.failure()

// "Failed to execute tokenBucket rate limiting command: The client is closed"
const describe = (error: RateLimiter.RateLimitStoreError): string => {
  const cause = error.cause as { readonly cause?: unknown; readonly message?: unknown } | undefined
  const inner = cause?.cause instanceof Error ? cause.cause.message : typeof cause?.message === "string" ? cause.message : ""
  return inner === "" ? error.message : `${error.message}: ${inner}`
}
