/**
 * The store area end to end, in real processes on every store: a pet ordered, approved
 * and delivered is sold; another ordered and cancelled is available again; the durable
 * stores keep all of it across a restart; and 50 concurrent orders for one pet on the
 * embedded store give exactly one order.
 */
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { createDatabase, databaseUrl, postgresAvailable } from "./PgAdmin.ts"
import { createPet, type ServiceProcess, startService, tempDir } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"

const API_KEY = "orders-test-key"

cleanUpProcesses()

const call = async (service: ServiceProcess, method: string, path: string, body?: unknown) => {
  const result = await service.request(method, path, { apiKey: API_KEY, ...(body === undefined ? {} : { body }) })
  return { status: result.status, json: result.json as Record<string, unknown> }
}

const petStatus = async (service: ServiceProcess, id: number) => (await call(service, "GET", `/v1/pets/${id}`)).json["status"]

const STORES = [
  ["memory", async () => ({ STORE: "memory" }), false],
  ["embedded", async () => ({ STORE: "embedded", DATA_DIR: Path.join(tempDir(), "data") }), true],
  ...(postgresAvailable
    ? [["postgres", async () => ({ STORE: "postgres", DATABASE_URL: databaseUrl(await createDatabase()) }), true] as const]
    : [])
] as const

describe.each(STORES)("orders over HTTP, %s store", (_, storeEnv, durable) => {
  it("order, approve, deliver: sold; order, cancel: available again; all of it after a restart", async () => {
    const env = { API_KEYS: API_KEY, ...(await storeEnv()) }
    const service = await startService({ env, startTimeoutMs: 60_000 })
    const sold = await createPet(service, API_KEY, { name: "Rex", categoryId: 1, status: "available" })
    const kept = await createPet(service, API_KEY, { name: "Tom", categoryId: 2, status: "available" })

    const first = await call(service, "POST", "/v1/store/orders", { petId: sold.id })
    expect(first.status).toBe(201)
    expect(await petStatus(service, sold.id)).toBe("pending")
    expect((await call(service, "POST", `/v1/store/orders/${first.json["id"]}/approve`)).json).toMatchObject({ status: "approved" })
    expect((await call(service, "POST", `/v1/store/orders/${first.json["id"]}/deliver`)).json)
      .toMatchObject({ status: "delivered", complete: true })
    expect(await petStatus(service, sold.id)).toBe("sold")

    const second = await call(service, "POST", "/v1/store/orders", { petId: kept.id })
    expect(await petStatus(service, kept.id)).toBe("pending")
    expect((await call(service, "POST", `/v1/store/orders/${second.json["id"]}/cancel`)).json).toMatchObject({ status: "cancelled" })
    expect(await petStatus(service, kept.id)).toBe("available")

    const refused = await call(service, "POST", `/v1/store/orders/${first.json["id"]}/cancel`)
    expect(refused).toMatchObject({ status: 409, json: { code: "invalid_transition", status: 409 } })
    expect((await call(service, "POST", "/v1/store/orders", { petId: sold.id })).json).toMatchObject({ code: "pet_not_available" })

    const orders = (await call(service, "GET", "/v1/store/orders")).json
    const inventory = (await call(service, "GET", "/v1/store/inventory")).json
    expect(inventory).toEqual({ available: 1, pending: 0, sold: 1, none: 0 })
    expect(await service.stop()).toEqual({ code: 0, signal: null })
    if (!durable) return

    const restarted = await startService({ env, startTimeoutMs: 60_000 })
    expect((await call(restarted, "GET", "/v1/store/orders")).json).toEqual(orders)
    expect((await call(restarted, "GET", "/v1/store/inventory")).json).toEqual(inventory)
    expect(await petStatus(restarted, sold.id)).toBe("sold")
    expect(await petStatus(restarted, kept.id)).toBe("available")
    expect(await restarted.stop()).toEqual({ code: 0, signal: null })
  }, 120_000)
})

describe("orders race on the embedded store", () => {
  it("50 concurrent orders for one pet: exactly one 201, 49 409 pet_not_available", async () => {
    const service = await startService({
      env: { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: Path.join(tempDir(), "data") },
      startTimeoutMs: 60_000
    })
    const pet = await createPet(service, API_KEY, { name: "Contested", categoryId: 1, status: "available" })
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => call(service, "POST", "/v1/store/orders", { petId: pet.id }))
    )
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1)
    expect(answers.filter((answer) => answer.status === 409 && answer.json["code"] === "pet_not_available")).toHaveLength(49)
    expect((await call(service, "GET", `/v1/store/orders?petId=${pet.id}`)).json).toHaveLength(1)
    expect(await service.stop()).toEqual({ code: 0, signal: null })
  }, 120_000)
})
