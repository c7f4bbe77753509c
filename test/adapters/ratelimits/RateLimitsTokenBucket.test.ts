import { NodeRedis } from "@effect/platform-node"
import { assert, it as effectIt } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Logger, ManagedRuntime, References } from "effect"
import { RateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import { describe, expect, it, onTestFinished } from "vitest"
import * as RateLimiterStoreMemory from "../../../src/adapters/ratelimits/RateLimiterStoreMemory.ts"
import * as RateLimitsTokenBucket from "../../../src/adapters/ratelimits/RateLimitsTokenBucket.ts"
import { RateLimits, type RateLimitSubject } from "../../../src/ports/ratelimits/RateLimits.ts"
import { redisAvailable, startRedis } from "./RedisServer.ts"

const POLICIES = {
  key: { name: "key", quota: 3, windowSeconds: 60 },
  address: { name: "address", quota: 2, windowSeconds: 60 }
} as const

const limitsOn = (store: Layer.Layer<RateLimiter.RateLimiterStore, unknown>, timeout?: Duration.Input) => {
  const runtime = ManagedRuntime.make(
    RateLimitsTokenBucket.layer({ policies: POLICIES, timeout }).pipe(
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

/** A store the test freezes and thaws, as SIGSTOP and SIGCONT do a Redis; it counts the calls it was asked. */
const freezableStore = (control: { frozen: boolean; calls: number }) =>
  Layer.effect(
    RateLimiter.RateLimiterStore,
    Effect.map(Effect.service(RateLimiter.RateLimiterStore), (memory) =>
      RateLimiter.RateLimiterStore.of({
        ...memory,
        tokenBucket: (options) =>
          Effect.suspend(() => {
            control.calls++
            return control.frozen ? Effect.never : memory.tokenBucket(options)
          })
      }))
  ).pipe(Layer.provide(RateLimiter.layerStoreMemory))

/** What `effect` gives without the test clock moving; a defect if it waits for the clock. */
const withoutWaiting = <A>(what: string, effect: Effect.Effect<A>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(effect, { startImmediately: true })
    yield* Effect.yieldNow
    const exit = fiber.pollUnsafe()
    if (exit === undefined) return yield* Effect.die(new Error(`${what} waited for the store`))
    return yield* exit
  })

describe("RateLimitsTokenBucket's circuit over a remote store", () => {
  const TIMEOUT = Duration.millis(250)
  const withLimits = <A>(
    control: { frozen: boolean; calls: number },
    logs: Array<string>,
    body: (limits: RateLimits["Service"]) => Effect.Effect<A>
  ) =>
    RateLimits.use(body).pipe(
      Effect.provide(
        RateLimitsTokenBucket.layer({ policies: POLICIES, timeout: TIMEOUT }).pipe(
          Layer.provide(freezableStore(control))
        )
      ),
      Effect.provide(Logger.layer([Logger.make(({ message }) => logs.push(String(message)))]))
    )

  effectIt.effect(
    "opens after CIRCUIT_FAILURES timeouts in a row: requests and health skip the store; a probe in the background closes it again",
    () => {
      const control = { frozen: false, calls: 0 }
      const logs: Array<string> = []
      return withLimits(control, logs, (limits) =>
        Effect.gen(function*() {
          assert.include(yield* limits.consume("key", "k"), { allowed: true, remaining: 2 })
          control.frozen = true
          for (let i = 0; i < RateLimitsTokenBucket.CIRCUIT_FAILURES; i++) {
            const waiting = yield* Effect.forkChild(limits.consume("key", "k"))
            yield* TestClock.adjust(TIMEOUT)
            assert.isUndefined(yield* Fiber.join(waiting), "a timeout lets the request through")
          }
          const asked = control.calls

          // Open: every request goes on unlimited without waiting, and nothing is sent to the store.
          const request = (what: string) => withoutWaiting(what, limits.consume("key", "k"))
          for (let i = 0; i < 20; i++) assert.isUndefined(yield* request(`request ${i} after the circuit opened`))
          assert.deepStrictEqual(yield* withoutWaiting("health", limits.health), {
            _tag: "Degraded",
            reason: "no answer within 250ms"
          })
          assert.strictEqual(control.calls, asked, "the store was asked while the circuit was open")

          // Past the open time, one probe asks the store in the background; no request waits for it.
          yield* TestClock.adjust(RateLimitsTokenBucket.CIRCUIT_OPEN_FOR)
          for (let i = 0; i < 5; i++) assert.isUndefined(yield* request("a request while probing"))
          assert.strictEqual(control.calls, asked + 1, "one probe")
          // The probe times out too: open again.
          yield* TestClock.adjust(TIMEOUT)
          assert.isUndefined(yield* request("a request after a failed probe"))
          assert.strictEqual(control.calls, asked + 1)

          // The store answers again: the next probe, started by health alone, closes the circuit.
          control.frozen = false
          yield* TestClock.adjust(RateLimitsTokenBucket.CIRCUIT_OPEN_FOR)
          assert.strictEqual((yield* withoutWaiting("health", limits.health))._tag, "Degraded")
          yield* Effect.yieldNow
          assert.deepStrictEqual(yield* withoutWaiting("health", limits.health), { _tag: "Ok" })
          // The limits apply again: the bucket goes on from where it was, down to a refusal.
          assert.include(yield* limits.consume("key", "k"), { allowed: true, remaining: 1 })
          assert.include(yield* limits.consume("key", "k"), { allowed: true, remaining: 0 })
          assert.include(yield* limits.consume("key", "k"), { allowed: false })
          // Once when the outage started, once when it ended.
          assert.deepStrictEqual(logs, [
            "Rate limits not applied until the store answers again: no answer within 250ms",
            "Rate limits applied again: the store answers"
          ])
        }))
    }
  )

  effectIt.effect("a refused request is an answer from the store: refusals never open the circuit", () => {
    const control = { frozen: false, calls: 0 }
    return withLimits(control, [], (limits) =>
      Effect.gen(function*() {
        for (let i = 0; i < 3 + RateLimitsTokenBucket.CIRCUIT_FAILURES * 2; i++) yield* limits.consume("address", "a")
        const asked = control.calls
        assert.strictEqual((yield* limits.consume("address", "a"))?.allowed, false, "refused by the store, not skipped")
        assert.strictEqual(control.calls, asked + 1)
        assert.deepStrictEqual(yield* limits.health, { _tag: "Ok" })
      }))
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
