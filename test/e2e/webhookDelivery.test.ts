/**
 * Webhook delivery with real service processes and real local receivers: outcomes
 * (delivered, failing, slower than 5 s, 410), every delivery's signature checked with the
 * standardwebhooks package, a kill -9 during a delivery, two PostgreSQL instances sharing
 * the work, and the embedded store delivering from its own process.
 */
import { afterEach, describe, expect, it } from "vitest"
import { cleanUpProcesses } from "./Cleanup.ts"
import { createDatabase, databaseUrl, postgresAvailable } from "./PgAdmin.ts"
import { eventually, initializedDataDir, type ServiceProcess, sleep, startService } from "./ServiceProcess.ts"
import { type Receiver, startReceiver, verified } from "./WebhookReceiver.ts"

cleanUpProcesses()

const KEY = "webhook-e2e-key"
const receivers: Array<Receiver> = []
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
})
const receiver = async () => {
  const started = await startReceiver()
  receivers.push(started)
  return started
}

const subscribe = async (service: ServiceProcess, url: string) => {
  const created = await service.request("POST", "/v1/webhooks", { apiKey: KEY, body: { url, types: ["pet.created"] } })
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  return created.json as { id: number; secret: string }
}

const createPets = async (service: ServiceProcess, names: ReadonlyArray<string>) => {
  const ids: Array<number> = []
  for (const name of names) {
    const created = await service.request("POST", "/v1/pets", { apiKey: KEY, body: { name, categoryId: 1 } })
    expect(created.status).toBe(201)
    ids.push((created.json as { id: number }).id)
  }
  return ids
}

const deliveriesOf = async (service: ServiceProcess, id: number) =>
  (await service.request("GET", `/v1/webhooks/${id}/deliveries?limit=100`, { apiKey: KEY })).json as Array<{
    eventId: number
    attempt: number
    outcome: string
    httpStatus?: number
    error?: string
  }>

/** After a restart: `/hold` got the event `id` again, with the same webhook-id, and `service` recorded it delivered. */
const expectDeliveredAgain = async (
  hooks: Receiver,
  service: ServiceProcess,
  hold: { id: number; secret: string },
  id: number | undefined,
  timeoutMs: number
) => {
  await eventually(async () => hooks.to("/hold").length >= 2, timeoutMs, "the delivery again after the restart")
  const [before, after] = hooks.to("/hold")
  expect(after!.headers["webhook-id"]).toBe(before!.headers["webhook-id"])
  expect(verified(after!, hold.secret).data["id"]).toBe(id)
  await eventually(
    async () => (await deliveriesOf(service, hold.id)).some((attempt) => attempt.outcome === "delivered"),
    10_000,
    "the delivery recorded"
  )
}

const env = (store: Record<string, string>) => ({ ...store, API_KEYS: KEY, WEBHOOK_ALLOW_PRIVATE: "true" })

describe.skipIf(!postgresAvailable)("PostgreSQL store", () => {
  it("delivers signed, in order; retries a failing and a slow receiver with the same id; a 410 disables", async () => {
    const hooks = await receiver()
    const service = await startService({ env: env({ STORE: "postgres", DATABASE_URL: databaseUrl(await createDatabase()) }) })
    const ok = await subscribe(service, hooks.url("/ok"))
    const fail = await subscribe(service, hooks.url("/fail"))
    const slow = await subscribe(service, hooks.url("/slow"))
    const gone = await subscribe(service, hooks.url("/gone"))
    const ids = await createPets(service, ["a", "b", "c"])

    await eventually(async () => hooks.to("/ok").length >= 3, 15_000, "three deliveries to /ok")
    const payloads = hooks.to("/ok").map((delivery) => verified(delivery, ok.secret))
    expect(payloads.map((payload) => payload.data["id"])).toEqual(ids)
    expect(payloads.map((payload) => payload.type)).toEqual(["pet.created", "pet.created", "pet.created"])
    expect(() => verified(hooks.to("/ok")[0]!, fail.secret)).toThrow()

    await eventually(async () => hooks.to("/fail").length >= 2, 20_000, "a retry to /fail")
    const failed = hooks.to("/fail")
    expect(new Set(failed.map((delivery) => delivery.headers["webhook-id"])).size).toBe(1)
    for (const delivery of failed) expect(verified(delivery, fail.secret).data["id"]).toBe(ids[0])

    await eventually(async () => (await deliveriesOf(service, slow.id)).length >= 1, 20_000, "the slow attempt recorded")
    const [slowAttempt] = await deliveriesOf(service, slow.id)
    expect(slowAttempt).toMatchObject({ outcome: "retry", attempt: 1 })
    expect(slowAttempt!.error).toContain("no complete answer within 5s")

    await eventually(
      async () => ((await service.request("GET", `/v1/webhooks/${gone.id}`, { apiKey: KEY })).json as { state: string }).state === "disabled",
      15_000,
      "the 410 subscription disabled"
    )
    await sleep(1_000)
    expect(hooks.to("/gone")).toHaveLength(1)
    expect(await deliveriesOf(service, gone.id)).toMatchObject([{ outcome: "gone", httpStatus: 410 }])

    const metrics = (await service.request("GET", "/metrics")).text
    expect(metrics).toMatch(/webhook_deliveries_total\{outcome="delivered"\} [1-9]/)
    expect(metrics).toMatch(/webhook_deliveries_total\{outcome="gone"\} 1/)
    expect(metrics).toContain("webhook_oldest_undelivered_event_age_seconds")
  }, 90_000)

  it("a kill -9 during a delivery: the event is delivered again after the restart, with the same id", async () => {
    const hooks = await receiver()
    const store = env({ STORE: "postgres", DATABASE_URL: databaseUrl(await createDatabase()), WEBHOOK_LEASE: "6 seconds" })
    const first = await startService({ env: store })
    const hold = await subscribe(first, hooks.url("/hold"))
    const [id] = await createPets(first, ["held"])
    await eventually(async () => hooks.to("/hold").length === 1, 15_000, "the delivery under way")
    await first.kill9()
    hooks.answerHeld()
    const second = await startService({ env: store })
    await expectDeliveredAgain(hooks, second, hold, id, 30_000)
  }, 90_000)

  it("two instances on one database share the work: every event once, in order", async () => {
    const hooks = await receiver()
    const store = env({ STORE: "postgres", DATABASE_URL: databaseUrl(await createDatabase()) })
    const [one, two] = await Promise.all([startService({ env: store }), startService({ env: store })])
    const ok = await subscribe(one!, hooks.url("/ok"))
    const names = Array.from({ length: 40 }, (_, i) => `shared-${i}`)
    const ids: Array<number> = []
    for (const [i, name] of names.entries()) ids.push(...await createPets(i % 2 === 0 ? one! : two!, [name]))
    await eventually(async () => hooks.to("/ok").length >= names.length, 30_000, "every event delivered")
    await sleep(2_000)
    const delivered = hooks.to("/ok").map((delivery) => verified(delivery, ok.secret).data["id"])
    expect(delivered).toEqual(ids)
  }, 90_000)
})

describe("embedded and memory stores", () => {
  it("the embedded store delivers from its own process", async () => {
    const hooks = await receiver()
    const service = await startService({ env: env({ STORE: "embedded", DATA_DIR: await initializedDataDir() }), startTimeoutMs: 60_000 })
    const ok = await subscribe(service, hooks.url("/ok"))
    const ids = await createPets(service, ["e1", "e2"])
    await eventually(async () => hooks.to("/ok").length >= 2, 15_000, "two deliveries")
    expect(hooks.to("/ok").map((delivery) => verified(delivery, ok.secret).data["id"])).toEqual(ids)
  }, 90_000)

  it("a SIGTERM while the receiver hangs: the delivery is cut short, exit 0 at once, and it is made again after the restart", async () => {
    const hooks = await receiver()
    const store = env({ STORE: "embedded", DATA_DIR: await initializedDataDir() })
    const first = await startService({ env: store, startTimeoutMs: 60_000 })
    const hold = await subscribe(first, hooks.url("/hold"))
    const [id] = await createPets(first, ["hung"])
    await eventually(async () => hooks.to("/hold").length === 1, 15_000, "the delivery under way")
    const { exit, exitMs } = await first.exitTimed("SIGTERM", 20_000)
    expect(exit, first.output).toEqual({ code: 0, signal: null })
    // Well within the 10 s drain, and not the delivery's own 5 s timeout waited out.
    expect(exitMs, first.output).toBeLessThan(4_000)

    hooks.answerHeld()
    const second = await startService({ env: store, startTimeoutMs: 60_000 })
    // The lease was released at the shutdown: no WEBHOOK_LEASE (30 s) to wait out.
    await expectDeliveredAgain(hooks, second, hold, id, 15_000)
    // The cut-short attempt was not recorded: the one after the restart is the first.
    expect(await deliveriesOf(second, hold.id)).toMatchObject([{ eventId: expect.any(Number), attempt: 1, outcome: "delivered" }])
  }, 120_000)

  it("the memory store delivers", async () => {
    const hooks = await receiver()
    const service = await startService({ env: env({ STORE: "memory" }) })
    const ok = await subscribe(service, hooks.url("/ok"))
    const ids = await createPets(service, ["m1"])
    await eventually(async () => hooks.to("/ok").length >= 1, 15_000, "a delivery")
    expect(verified(hooks.to("/ok")[0]!, ok.secret).data["id"]).toBe(ids[0])
  }, 60_000)
})
