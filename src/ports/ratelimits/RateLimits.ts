import { Context, type Effect } from "effect"

/**
 * A quota policy in the terms of the IETF RateLimit fields: a bucket of `quota` requests
 * that refills evenly, `quota` every `windowSeconds`. A client may send `quota` requests at
 * once, then `quota / windowSeconds` per second.
 */
export interface RateLimitPolicy {
  /** The policy's name in the `RateLimit` and `RateLimit-Policy` fields. */
  readonly name: string
  readonly quota: number
  readonly windowSeconds: number
}

/** Whose bucket a request draws from: its verified key's, or (without one) its client address's. */
export type RateLimitSubject = "key" | "address"

/** The outcome of taking one request from a bucket. */
export interface RateLimitDecision {
  readonly allowed: boolean
  readonly policy: RateLimitPolicy
  /** Requests left in the bucket after this one (0 when refused). */
  readonly remaining: number
  /** Whole seconds until the bucket holds another request (0 when it is full). */
  readonly retryAfterSeconds: number
}

/** Whether the buckets can be consulted right now. */
export type RateLimitHealth =
  | { readonly _tag: "Ok" }
  | { readonly _tag: "Degraded"; readonly reason: string }

/**
 * Per-subject request buckets. `consume` never fails: when the buckets' store cannot be
 * reached it answers `undefined` (no limit applied, the request goes on) and `health` says
 * why until the store answers again. Refusing every client because the limiter is away
 * would turn a limiter outage into a service outage.
 */
export class RateLimits extends Context.Service<RateLimits, {
  readonly policies: { readonly [S in RateLimitSubject]: RateLimitPolicy }
  /** Takes one request from the bucket of `subject` `id`. */
  readonly consume: (subject: RateLimitSubject, id: string) => Effect.Effect<RateLimitDecision | undefined>
  readonly health: Effect.Effect<RateLimitHealth>
}>()("animal-store/ports/RateLimits") {}
