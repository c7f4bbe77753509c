import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import * as RateLimiterStoreMemory from "../../../src/adapters/ratelimits/RateLimiterStoreMemory.ts"

const bounded = Effect.provide(RateLimiterStoreMemory.make, RateLimiter.layerStoreMemory)
const effects = Effect.provide(Effect.service(RateLimiter.RateLimiterStore), Layer.fresh(RateLimiter.layerStoreMemory))

const draw = (store: RateLimiter.RateLimiterStore["Service"], key: string, tokens: number, limit: number) =>
  store.tokenBucket({ key, tokens, limit, refillRate: Duration.seconds(1), allowOverflow: false })

describe("RateLimiterStoreMemory", () => {
  it.effect("answers every token-bucket call as effect's memory store does", () =>
    Effect.gen(function*() {
      const { store } = yield* bounded
      const reference = yield* effects
      // A fixed pseudo-random walk over keys, draws and clock steps, sweeps included.
      let seed = 12345
      const next = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2147483648
        return seed % n
      }
      for (let step = 0; step < 3000; step++) {
        const key = `k${next(7)}`
        const tokens = 1 + next(3)
        const ours = yield* draw(store, key, tokens, 5)
        const theirs = yield* draw(reference, key, tokens, 5)
        assert.deepStrictEqual(ours, theirs, `step ${step}, ${key}`)
        yield* TestClock.adjust(Duration.millis(next(4) * 400))
      }
    }))

  it.effect("forgets a bucket once it has refilled, and keeps one still refilling", () =>
    Effect.gen(function*() {
      const { bucketCount, store } = yield* bounded
      for (let i = 0; i < 1000; i++) yield* draw(store, `address-${i}`, 1, 5)
      // 100 tokens at one a second: full again only after 100 s.
      assert.deepStrictEqual(yield* draw(store, "busy", 100, 100), [0, 0])
      assert.strictEqual(bucketCount(), 1001)

      yield* TestClock.adjust(RateLimiterStoreMemory.SWEEP_EVERY)
      yield* draw(store, "another", 1, 5)
      assert.strictEqual(bucketCount(), 2, "the 1,000 refilled buckets are gone; busy and another stay")
      // busy still knows it was drawn from: 10 s refilled 10 tokens, not 100.
      assert.deepStrictEqual(yield* draw(store, "busy", 1, 100), [9, 0])
    }))
})
