/**
 * Idempotent creates with real processes: two instances on one PostgreSQL database
 * answering 20 parallel retries of one create (a pet, a webhook subscription), per-API-key
 * separation and the 422, and a kept answer surviving a kill -9 and restart of the
 * embedded store.
 */
import { describe, expect, it } from "vitest"
import { createDatabase, databaseUrl, postgresAvailable, query } from "./PgAdmin.ts"
import { type HttpResult, initializedDataDir, listAll, type ServiceProcess, sleep, startService } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"

cleanUpProcesses()

const REX = { name: "Rex", categoryId: 9007199254740993, status: "available" }

// Port 9 (discard) on loopback: allowed with WEBHOOK_ALLOW_PRIVATE, and no event is sent to it here.
const HOOK = { url: "http://127.0.0.1:9/hook", types: ["pet.created", "order.placed"] }

const post = (service: ServiceProcess, apiKey: string, key: string, body: unknown = REX) =>
  service.request("POST", "/v1/pets", { apiKey, body, headers: { "idempotency-key": key } })

const postWebhook = (service: ServiceProcess, apiKey: string, key: string, body: unknown = HOOK) =>
  service.request("POST", "/v1/webhooks", { apiKey, body, headers: { "idempotency-key": key } })

// A client that retries a 409 idempotency_key_in_use as its Retry-After says; counts the 409s.
const postRetrying = async (
  send: () => Promise<HttpResult>,
  inUse: { count: number }
): Promise<HttpResult> => {
  for (let attempt = 1;; attempt++) {
    const result = await send()
    if (result.status !== 409 || attempt === 10) return result
    inUse.count++
    await sleep(Number(result.headers.get("retry-after") ?? "1") * 1000)
  }
}

describe.skipIf(!postgresAvailable)("idempotent creates on PostgreSQL", () => {
  it("20 parallel POSTs with one key over two instances: one pet, and every answer is its 201", async () => {
    const database = await createDatabase()
    const env = { API_KEYS: "shared-key", STORE: "postgres", DATABASE_URL: databaseUrl(database) }
    const [a, b] = await Promise.all([startService({ env }), startService({ env })])
    if (a === undefined || b === undefined) throw new Error("two instances expected")
    const inUse = { count: 0 }
    const started = performance.now()
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postRetrying(() => post(i % 2 === 0 ? a : b, "shared-key", "one-create"), inUse))
    )
    const elapsedMs = performance.now() - started
    const pets = await query<{ id: string }>(database, "SELECT id::text AS id FROM pets")
    expect(pets).toHaveLength(1)
    const id = Number(pets[0]!.id)
    for (const answer of answers) {
      expect({ status: answer.status, body: answer.json }).toEqual({ status: 201, body: { id, ...REX, tags: [], version: 1 } })
      expect(answer.headers.get("location")).toBe(`/v1/pets/${id}`)
    }
    // One of them created it; the others were replays of it.
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    expect(await query(database, "SELECT key_id, idempotency_key, status FROM idempotency_keys")).toEqual([
      expect.objectContaining({ idempotency_key: "one-create", status: 201 })
    ])
    for (const instance of [a, b]) expect(await instance.stop()).toEqual({ code: 0, signal: null })
    console.info(`[idempotency] 20 parallel retries over two instances: ${inUse.count} 409s retried, all answered in ${elapsedMs.toFixed(0)} ms`)
  }, 90_000)

  it("20 parallel POST /v1/webhooks with one key over two instances: one subscription, one secret, every answer its 201", async () => {
    const database = await createDatabase()
    const env = { API_KEYS: "shared-key", STORE: "postgres", DATABASE_URL: databaseUrl(database), WEBHOOK_ALLOW_PRIVATE: "true" }
    const [a, b] = await Promise.all([startService({ env }), startService({ env })])
    if (a === undefined || b === undefined) throw new Error("two instances expected")
    const inUse = { count: 0 }
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postRetrying(() => postWebhook(i % 2 === 0 ? a : b, "shared-key", "one-hook"), inUse))
    )
    const webhooks = await query<{ id: string; secret: string }>(database, "SELECT id::text AS id, secret FROM webhooks")
    expect(webhooks).toHaveLength(1)
    const { id, secret } = webhooks[0]!
    for (const answer of answers) {
      expect({ status: answer.status, body: answer.json }).toEqual({
        status: 201,
        body: expect.objectContaining({ id: Number(id), ...HOOK, state: "active", secret })
      })
      expect(answer.text).toBe(answers[0]!.text)
      expect(answer.headers.get("location")).toBe(`/v1/webhooks/${id}`)
    }
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    expect(await query(database, "SELECT idempotency_key, status FROM idempotency_keys")).toEqual([
      { idempotency_key: "one-hook", status: 201 }
    ])
    const reused = await postWebhook(a, "shared-key", "one-hook", { ...HOOK, types: ["pet.created"] })
    expect({ status: reused.status, body: reused.json }).toEqual({
      status: 422,
      body: { code: "idempotency_key_reused", message: expect.stringContaining("Idempotency-Key"), status: 422 }
    })
    for (const instance of [a, b]) expect(await instance.stop()).toEqual({ code: 0, signal: null })
    console.info(`[idempotency] 20 parallel webhook creates over two instances: ${inUse.count} 409s retried`)
  }, 90_000)

  it("the same key from two API keys makes two pets; another body with a used key is 422", async () => {
    const database = await createDatabase()
    const service = await startService({
      env: { API_KEYS: "key-a,key-b", STORE: "postgres", DATABASE_URL: databaseUrl(database) }
    })
    const fromA = await post(service, "key-a", "shared-name")
    const fromB = await post(service, "key-b", "shared-name")
    expect([fromA.status, fromB.status]).toEqual([201, 201])
    expect((fromB.json as { id: number }).id).not.toBe((fromA.json as { id: number }).id)
    expect(fromB.headers.get("idempotent-replayed")).toBeNull()
    const againB = await post(service, "key-b", "shared-name")
    expect(againB.text).toBe(fromB.text)
    expect(againB.headers.get("idempotent-replayed")).toBe("true")

    const reused = await post(service, "key-a", "shared-name", { ...REX, name: "Max" })
    expect({ status: reused.status, body: reused.json }).toEqual({
      status: 422,
      body: { code: "idempotency_key_reused", message: expect.stringContaining("Idempotency-Key"), status: 422 }
    })
    expect((await listAll(service, "key-a")).pets).toHaveLength(2)
    expect(await service.stop()).toEqual({ code: 0, signal: null })
  }, 60_000)
})

describe("idempotent creates on the embedded store", () => {
  it("a kept answer survives kill -9 and a restart: the retry replays the first pet", async () => {
    const dataDir = await initializedDataDir()
    const env = { API_KEYS: "embedded-key", STORE: "embedded", DATA_DIR: dataDir }
    const first = await startService({ env, startTimeoutMs: 60_000 })
    const created = await post(first, "embedded-key", "before-the-crash")
    expect(created.status).toBe(201)
    await first.kill9()

    const second = await startService({ env, startTimeoutMs: 60_000 })
    const retry = await post(second, "embedded-key", "before-the-crash")
    expect(retry.status).toBe(201)
    expect(retry.text).toBe(created.text)
    expect(retry.headers.get("location")).toBe(created.headers.get("location"))
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    expect((await listAll(second, "embedded-key")).pets).toHaveLength(1)
    expect(await second.stop()).toEqual({ code: 0, signal: null })
  }, 120_000)

  it("a webhook's kept answer survives kill -9 and a restart: the retry replays the first subscription and its secret", async () => {
    const dataDir = await initializedDataDir()
    const env = { API_KEYS: "embedded-key", STORE: "embedded", DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: "true" }
    const first = await startService({ env, startTimeoutMs: 60_000 })
    const created = await postWebhook(first, "embedded-key", "hook-before-the-crash")
    expect(created.status).toBe(201)
    expect((created.json as { secret: string }).secret).toMatch(/^whsec_/)
    await first.kill9()

    const second = await startService({ env, startTimeoutMs: 60_000 })
    const retry = await postWebhook(second, "embedded-key", "hook-before-the-crash")
    expect(retry.status).toBe(201)
    expect(retry.text).toBe(created.text)
    expect(retry.headers.get("location")).toBe(created.headers.get("location"))
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    expect((await second.request("GET", "/v1/webhooks", { apiKey: "embedded-key" })).json).toHaveLength(1)
    expect(await second.stop()).toEqual({ code: 0, signal: null })
  }, 120_000)
})
