/**
 * Rate limits on the real service, over real sockets: per key and, for requests without a
 * valid key, per client address; the 429 and its fields; one bucket shared by two
 * instances through one Redis; and serving on, unlimited, while that Redis is away.
 */
import { WARN } from "./LogLines.ts"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { RateLimitsTokenBucket } from "../../src/adapters/ratelimits/index.ts"
import { redisAvailable, startRedis } from "../adapters/ratelimits/RedisServer.ts"
import { eventually, type HttpResult, killAll, removeTempDirs, type ServiceProcess, startService } from "./ServiceProcess.ts"

const [KEY_A, KEY_B] = ["limits-key-a", "limits-key-b"]

afterEach(killAll)
afterAll(async () => {
  await killAll()
  removeTempDirs()
})

// The harness turns limits off unless asked: these tests ask, with the defaults unless set.
const start = (env: Readonly<Record<string, string>>) =>
  startService({ env: { STORE: "memory", API_KEYS: `${KEY_A},${KEY_B}`, RATE_LIMIT: "200/2s", ...env } })

const expectRateLimited = (result: HttpResult, policy: string) => {
  expect(result.status).toBe(429)
  expect(result.json).toEqual({ code: "rate_limited", message: expect.any(String), status: 429 })
  const retryAfter = Number(result.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(result.headers.get("ratelimit-policy")).toBe(policy)
  expect(result.headers.get("ratelimit")).toBe(`${policy.slice(0, policy.indexOf(";"))};r=0;t=${retryAfter}`)
}

const times = async (count: number, send: () => Promise<HttpResult>) => {
  const results: Array<HttpResult> = []
  for (let i = 0; i < count; i++) results.push(await send())
  return results
}

describe("rate limits on one instance (memory buckets)", () => {
  it("counts each key down in the RateLimit field, then answers 429; another key is unaffected", async () => {
    const service = await start({ RATE_LIMIT: "3/60s" })
    const policy = `"key";q=3;w=60`
    // Every operation draws from the same bucket.
    const [list, inventory, create] = [
      await service.request("GET", "/v1/pets", { apiKey: KEY_A }),
      await service.request("GET", "/v1/store/inventory", { apiKey: KEY_A }),
      await service.request("POST", "/v1/pets", { apiKey: KEY_A, body: { name: "Rex", categoryId: 1 } })
    ]
    expect([list.status, inventory.status, create.status]).toEqual([200, 200, 201])
    for (const result of [list, inventory, create]) expect(result.headers.get("ratelimit-policy")).toBe(policy)
    // 3 per 60 s: one request regained every 20 s, so the next is at most 20 s away (less
    // by however long these requests took on a busy machine).
    const fields = [list, inventory, create].map((result) => /^"key";r=(\d+);t=(\d+)$/.exec(result.headers.get("ratelimit") ?? ""))
    expect(fields.map((field) => field?.[1])).toEqual(["2", "1", "0"])
    for (const field of fields) expect(Number(field?.[2])).toBeGreaterThanOrEqual(15)
    for (const field of fields) expect(Number(field?.[2])).toBeLessThanOrEqual(20)

    for (const path of ["/v1/pets", "/v1/store/orders/1", "/v1/store/inventory"]) {
      expectRateLimited(await service.request("GET", path, { apiKey: KEY_A }), policy)
    }
    // Refused before the store: nothing was created.
    expectRateLimited(await service.request("POST", "/v1/pets", { apiKey: KEY_A, body: { name: "Max", categoryId: 1 } }), policy)

    const other = await service.request("GET", "/v1/pets", { apiKey: KEY_B })
    expect(other.status).toBe(200)
    expect((other.json as Array<{ name: string }>).map((pet) => pet.name)).toEqual(["Rex"])
    expect(other.headers.get("ratelimit")).toMatch(/^"key";r=2;t=\d+$/)
  })

  it("error answers to a valid key carry the RateLimit fields too, on every operation", async () => {
    const service = await start({ RATE_LIMIT: "100/60s" })
    const answers = [
      await service.request("GET", "/v1/pets?limit=0", { apiKey: KEY_A }),
      await service.request("GET", "/v1/pets/1", { apiKey: KEY_A }),
      await service.request("POST", "/v1/store/orders", { apiKey: KEY_A, body: { petId: 1 } }),
      await service.request("POST", "/v1/store/orders/1/approve", { apiKey: KEY_A }),
      await service.request("GET", "/v1/store/orders/x", { apiKey: KEY_A })
    ]
    expect(answers.map((result) => result.status)).toEqual([400, 404, 404, 404, 400])
    answers.forEach((result, index) => {
      expect(result.headers.get("ratelimit-policy"), `answer ${index}`).toBe(`"key";q=100;w=60`)
      expect(result.headers.get("ratelimit"), `answer ${index}`).toMatch(/^"key";r=\d+;t=\d+$/)
    })
  })

  it("limits requests without a valid key per client address: 401 until the address's bucket is empty, then 429; valid keys go on", async () => {
    const service = await start({ RATE_LIMIT_ADDRESS: "3/60s" })
    const policy = `"address";q=3;w=60`
    const refused = await times(3, () => service.request("GET", "/v1/pets", { apiKey: `guess-${Math.random()}` }))
    expect(refused.map((result) => result.status)).toEqual([401, 401, 401])
    expectRateLimited(await service.request("GET", "/v1/pets", { apiKey: "another-guess" }), policy)
    expectRateLimited(await service.request("GET", "/v1/pets"), policy)
    expectRateLimited(await service.request("POST", "/v1/store/orders", { body: { petId: 1 } }), policy)
    // A client behind the same address with a valid key draws from its key's bucket.
    expect((await service.request("GET", "/v1/pets", { apiKey: KEY_A })).status).toBe(200)
    // X-Forwarded-For is not believed without TRUST_PROXY.
    expectRateLimited(await service.request("GET", "/v1/pets", { headers: { "x-forwarded-for": "203.0.113.9" } }), policy)
  })

  it("behind a trusted proxy, X-Forwarded-For names the client whose bucket is used", async () => {
    const service = await start({ RATE_LIMIT_ADDRESS: "1/60s", TRUST_PROXY: "127.0.0.1" })
    const from = (client: string) => service.request("GET", "/v1/pets", { headers: { "x-forwarded-for": client } })
    expect((await from("203.0.113.9")).status).toBe(401)
    expect((await from("203.0.113.9")).status).toBe(429)
    expect((await from("198.51.100.7")).status).toBe(401)
    // IPv6 clients share their /64.
    expect((await from("2001:db8:1:2::1")).status).toBe(401)
    expect((await from("2001:db8:1:2:ffff::9")).status).toBe(429)
  })

  it("RATE_LIMIT=off limits nothing and adds no fields", async () => {
    const service = await start({ RATE_LIMIT: "off" })
    const results = await times(30, () => service.request("GET", "/v1/pets", { apiKey: "wrong" }))
    expect(new Set(results.map((result) => result.status))).toEqual(new Set([401]))
    const ok = await service.request("GET", "/v1/pets", { apiKey: KEY_A })
    expect(ok.headers.get("ratelimit")).toBeNull()
    expect((await service.request("GET", "/readyz")).json).toEqual({ status: "ready", checks: { store: "ok" } })
  })
})

const readyz = async (service: ServiceProcess) => {
  const result = await service.request("GET", "/readyz")
  return { status: result.status, json: result.json as { status: string; checks: Record<string, string> } }
}

describe.skipIf(!redisAvailable)("rate limits shared through Redis", () => {
  it("two instances draw from one bucket per key; with Redis killed both keep serving, unlimited, and /readyz says why", async () => {
    const redis = await startRedis()
    const env = { REDIS_URL: redis.url, RATE_LIMIT: "6/60s", RATE_LIMIT_ADDRESS: "2/60s" }
    const [a, b] = await Promise.all([start(env), start(env)])
    // 6 requests in all, alternating between the instances, then 429 from either.
    const statuses = [] as Array<number>
    for (let i = 0; i < 4; i++) {
      statuses.push((await a.request("GET", "/v1/pets", { apiKey: KEY_B })).status)
      statuses.push((await b.request("GET", "/v1/pets", { apiKey: KEY_B })).status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429])
    // The per-address bucket is shared too.
    expect((await a.request("GET", "/v1/pets")).status).toBe(401)
    expect((await b.request("GET", "/v1/pets")).status).toBe(401)
    expect((await a.request("GET", "/v1/pets")).status).toBe(429)
    expect((await readyz(a)).json.checks).toEqual({ store: "ok", rateLimits: "ok" })

    await redis.kill()
    for (const service of [a, b]) {
      const served = await times(10, () => service.request("GET", "/v1/pets", { apiKey: KEY_B, timeoutMs: 5_000 }))
      expect(served.map((result) => result.status)).toEqual(Array(10).fill(200))
      expect(served[0]?.headers.get("ratelimit")).toBeNull()
      const ready = await readyz(service)
      expect(ready.status).toBe(200)
      expect(ready.json.status).toBe("ready")
      expect(ready.json.checks["rateLimits"]).toMatch(/^degraded: /)
      // One warning for the outage, not one per request (log lines are written every 50 ms).
      const warnings = () =>
        service.logLines().filter((line) => String(line["msg"]).startsWith("Rate limits not applied"))
      await eventually(async () => warnings().length > 0, 10_000, "the rate limits' outage warning")
      expect(warnings()).toHaveLength(1)
      expect(warnings()[0]?.["level"]).toBe(WARN)
    }

    await redis.start()
    // node-redis reconnects with a backoff of at most about 2 s.
    await eventually(async () => (await readyz(a)).json.checks["rateLimits"] === "ok", 10_000, "/readyz to find Redis again")
    // The new Redis starts with full buckets.
    expect((await a.request("GET", "/v1/pets", { apiKey: KEY_B })).headers.get("ratelimit")).toMatch(/^"key";r=5;/)
  })
})

describe.skipIf(!redisAvailable)("rate limits with Redis frozen (SIGSTOP)", () => {
  it("after a few timeouts the circuit opens: requests and /readyz stop waiting for Redis; after SIGCONT limits apply again", async () => {
    const redis = await startRedis()
    const service = await start({ REDIS_URL: redis.url, RATE_LIMIT: "8/60s" })
    const first = await service.request("GET", "/v1/pets", { apiKey: KEY_A })
    expect(first.headers.get("ratelimit")).toMatch(/^"key";r=7;/)

    redis.pause()
    try {
      // Each of these waits for Redis until the timeout, then goes on unlimited.
      const opening = await times(
        RateLimitsTokenBucket.CIRCUIT_FAILURES,
        () => service.request("GET", "/v1/pets", { apiKey: KEY_A })
      )
      expect(opening.map((result) => result.status)).toEqual(Array(RateLimitsTokenBucket.CIRCUIT_FAILURES).fill(200))

      // Open: 20 requests in a row would take 20 × 250 ms if each still waited for Redis.
      const started = performance.now()
      const served = await times(20, () => service.request("GET", "/v1/pets", { apiKey: KEY_A }))
      const elapsed = performance.now() - started
      expect(served.map((result) => result.status)).toEqual(Array(20).fill(200))
      expect(served.every((result) => result.headers.get("ratelimit") === null)).toBe(true)
      expect(elapsed).toBeLessThan(1_500)

      const readyzMillis = []
      for (let i = 0; i < 5; i++) {
        const before = performance.now()
        const ready = await readyz(service)
        readyzMillis.push(performance.now() - before)
        expect(ready.status).toBe(200)
        expect(ready.json.status).toBe("ready")
        expect(ready.json.checks["rateLimits"]).toMatch(/^degraded: no answer within 250/)
      }
      const readyzTimes = readyzMillis.map((ms) => ms.toFixed(1)).join(", ")
      console.info(`frozen Redis, circuit open: 20 requests in ${elapsed.toFixed(0)} ms, /readyz in ${readyzTimes} ms`)
      // The issue asks for 50 ms; the bound leaves room for a loaded machine, still under the 250 ms timeout.
      expect(Math.max(...readyzMillis)).toBeLessThan(200)
    } finally {
      redis.resume()
    }

    // A probe closes the circuit within about a second; then the bucket is drawn from again, down to a 429.
    let refused: HttpResult | undefined
    const deadline = Date.now() + 15_000
    while (refused === undefined && Date.now() < deadline) {
      const result = await service.request("GET", "/v1/pets", { apiKey: KEY_A })
      if (result.status === 429) refused = result
      else await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(refused?.status).toBe(429)
    expect((await readyz(service)).json.checks["rateLimits"]).toBe("ok")
    const outageLines = service.logLines().map((line) => String(line["msg"])).filter((message) =>
      message.startsWith("Rate limits")
    )
    expect(outageLines).toEqual([
      "Rate limits not applied until the store answers again: no answer within 250ms",
      "Rate limits applied again: the store answers"
    ])
  })
})
