/**
 * effect's in-memory RateLimiterStore keeps every bucket it has made, and a bucket is made
 * per client address that sends a request without a valid key: memory anyone can grow from
 * outside. This store answers token buckets exactly as effect's does, and forgets a bucket
 * once it has refilled, when it answers the same as no bucket at all (a new bucket starts
 * full). Fixed windows and adaptive limits, which this service does not use, go to
 * effect's store.
 */
import { Clock, Duration, Effect, Layer } from "effect"
import { RateLimiter } from "effect/persistence"

/** How often, in clock time, the refilled buckets are dropped (on the next call after it). */
export const SWEEP_EVERY = Duration.seconds(10)

interface Bucket {
  tokens: number
  lastRefill: number
  /** When the bucket is full again unless it is drawn from. */
  fullAt: number
}

/** The store, and how many token buckets it holds (for tests). */
export const make = Effect.gen(function*() {
  const delegate = yield* RateLimiter.RateLimiterStore
  const buckets = new Map<string, Bucket>()
  const sweepEvery = Duration.toMillis(SWEEP_EVERY)
  let nextSweep = (yield* Clock.currentTimeMillis) + sweepEvery

  const sweep = (now: number) => {
    if (now < nextSweep) return
    nextSweep = now + sweepEvery
    for (const [key, bucket] of buckets) if (bucket.fullAt <= now) buckets.delete(key)
  }

  // A policy passes the same Duration on every request; converting it (bigint nanoseconds
  // for a fine rate) each time showed in profiles, so the last conversion is kept.
  let lastRate: Duration.Duration | undefined
  let lastRateMillis = 0
  const millisOf = (rate: Duration.Duration) => {
    if (rate !== lastRate) {
      lastRate = rate
      lastRateMillis = Duration.toMillis(rate)
    }
    return lastRateMillis
  }

  const store = RateLimiter.RateLimiterStore.of({
    ...delegate,
    // effect's memory token bucket, step for step, plus the time it is full again; one
    // step of the runtime, the clock read from the fiber.
    tokenBucket: (options) =>
      Effect.withFiberSucceed((fiber) => {
        const refillRateMillis = millisOf(options.refillRate)
        const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
        sweep(now)
        let bucket = buckets.get(options.key)
        if (bucket === undefined) {
          bucket = { tokens: options.limit, lastRefill: now, fullAt: now }
          buckets.set(options.key, bucket)
        }
        const tokensToAdd = Math.floor((now - bucket.lastRefill) / refillRateMillis)
        if (tokensToAdd > 0) {
          bucket.tokens = Math.min(options.limit, bucket.tokens + tokensToAdd)
          bucket.lastRefill += tokensToAdd * refillRateMillis
        }
        if (bucket.tokens >= options.limit) bucket.lastRefill = now
        const newTokenCount = bucket.tokens - options.tokens
        if (options.allowOverflow || newTokenCount >= 0) bucket.tokens = newTokenCount
        bucket.fullAt = bucket.lastRefill + Math.max(0, options.limit - bucket.tokens) * refillRateMillis
        return [newTokenCount, Math.max(0, now - bucket.lastRefill)] as const
      })
  })
  return { store, bucketCount: () => buckets.size }
})

/** A RateLimiterStore in this process's memory, bounded by the buckets still refilling. */
export const layer: Layer.Layer<RateLimiter.RateLimiterStore> = Layer.effect(
  RateLimiter.RateLimiterStore,
  Effect.map(make, ({ store }) => store)
).pipe(Layer.provide(RateLimiter.layerStoreMemory))
