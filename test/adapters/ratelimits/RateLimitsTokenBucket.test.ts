import { NodeRedis } from "@effect/platform-node"
import { type Duration, Layer, ManagedRuntime, References } from "effect"
import { RateLimiter } from "effect/persistence"
import { describe, expect, it, onTestFinished } from "vitest"
import * as RateLimiterStoreMemory from "../../../src/adapters/ratelimits/RateLimiterStoreMemory.ts"
import * as RateLimitsTokenBucket from "../../../src/adapters/ratelimits/RateLimitsTokenBucket.ts"
import { RateLimits, type RateLimitSubject } from "../../../src/ports/RateLimits.ts"
import { redisAvailable, startRedis } from "./RedisServer.ts"

const POLICIES = {
  key: { name: "key", quota: 3, windowSeconds: 60 },
  address: { name: "address", quota: 2, windowSeconds: 60 }
} as const

const limitsOn = (store: Layer.Layer<RateLimiter.RateLimiterStore, unknown>, timeout?: Duration.Input) => {
  const runtime = ManagedRuntime.make(
    RateLimitsTokenBucket.layer({ policies: POLICIES, timeout }).pipe(
      Layer.provide(RateLimiter.layer),
      Layer.provide(store),
      Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "None"))
    )
  )
  onTestFinished(() => runtime.dispose())
  return {
    consume: (subject: RateLimitSubject, id: string) =>
      runtime.runPromise(RateLimits.use((limits) => limits.consume(subject, id))),
    health: () => runtime.runPromise(RateLimits.use((limits) => limits.health))
  }
}

const redisStore = (url: string) =>
  RateLimiter.layerStoreRedis({ prefix: `test:${Math.random()}:` }).pipe(
    Layer.provide(NodeRedis.layer({ url, disableOfflineQueue: true }))
  )

describe("RateLimitsTokenBucket on the memory store", () => {
  it("counts a bucket down to its quota, then refuses with a retry time; other buckets are untouched", async () => {
    const limits = limitsOn(RateLimiterStoreMemory.layer)
    const taken = []
    for (let i = 0; i < 4; i++) taken.push(await limits.consume("key", "alpha"))
    expect(taken.map((decision) => [decision?.allowed, decision?.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0]
    ])
    // 3 per 60 s: the next request is regained 20 s after the first was taken.
    expect(taken[3]?.retryAfterSeconds).toBeGreaterThanOrEqual(19)
    expect(taken[3]?.retryAfterSeconds).toBeLessThanOrEqual(20)
    expect(taken[3]?.policy).toEqual(POLICIES.key)
    expect(await limits.consume("key", "beta")).toMatchObject({ allowed: true, remaining: 2 })
    // The same id as an address is another bucket, with the address policy.
    expect(await limits.consume("address", "alpha")).toMatchObject({ allowed: true, remaining: 1, policy: POLICIES.address })
    expect(await limits.health()).toEqual({ _tag: "Ok" })
  })
})

describe.skipIf(!redisAvailable)("RateLimitsTokenBucket on the Redis store", () => {
  it("shares one bucket between two instances", async () => {
    const redis = await startRedis()
    const prefix = redisStore(redis.url)
    const [a, b] = [limitsOn(prefix), limitsOn(prefix)]
    const allowed = []
    for (let i = 0; i < 4; i++) allowed.push((await (i % 2 === 0 ? a : b).consume("key", "shared"))?.allowed)
    expect(allowed).toEqual([true, true, true, false])
    expect((await b.consume("key", "other"))?.allowed).toBe(true)
  })

  it("lets requests through while Redis is away, says so in health, and recovers when it is back", async () => {
    const redis = await startRedis()
    const limits = limitsOn(redisStore(redis.url), "250 millis")
    expect(await limits.consume("key", "k")).toMatchObject({ allowed: true, remaining: 2 })
    await redis.kill()
    for (let i = 0; i < 5; i++) expect(await limits.consume("key", "k")).toBeUndefined()
    const degraded = await limits.health()
    expect(degraded._tag).toBe("Degraded")
    await redis.start()
    // node-redis reconnects with a backoff of at most about 2 s.
    const deadline = Date.now() + 10_000
    while ((await limits.health())._tag !== "Ok" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    expect(await limits.health()).toEqual({ _tag: "Ok" })
    // A fresh server lost the bucket: it starts full again.
    expect(await limits.consume("key", "k")).toMatchObject({ allowed: true, remaining: 2 })
  })
})
