/**
 * `Idempotency-Key` on the creates (pets, orders, webhooks), over HTTP on the memory
 * store: replays byte for byte, the 422 for another body, the 409 with Retry-After while
 * the first still runs, refusals kept like successes, malformed keys refused, and the
 * OpenAPI document.
 */
import { Deferred, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import * as WebhookRepositoryMemory from "../../../src/adapters/memory/webhooks/WebhookRepositoryMemory.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import { WebhookRepository } from "../../../src/ports/webhooks/WebhookRepository.ts"
import { AUTH, createPet, expectError, freshServer, JSON_AUTH, listAll, type TestServer } from "./TestServer.ts"

const withKey = (key: string) => ({ ...JSON_AUTH, "idempotency-key": key })

const postPet = (server: TestServer, body: string, key: string) =>
  server.call("POST", "/v1/pets", { body, headers: withKey(key) })

const postOrder = (server: TestServer, petId: number, key: string) =>
  server.call("POST", "/v1/store/orders", { body: `{"petId":${petId}}`, headers: withKey(key) })

const postWebhook = (server: TestServer, body: string, key: string) =>
  server.call("POST", "/v1/webhooks", { body, headers: withKey(key) })

const REX = `{"name":"Rex","categoryId":9007199254740993,"status":"available"}`
const HOOK = `{"url":"http://127.0.0.1:9/hook","types":["pet.created","order.placed"]}`

describe("Idempotency-Key on createPet", () => {
  it("a retry with the same key and body gets the first 201 again, marked as a replay, and stores nothing", async () => {
    const server = freshServer()
    const first = await postPet(server, REX, "retry-1")
    expect(first.status).toBe(201)
    expect(first.headers.get("location")).toBe("/v1/pets/1")
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    expect(first.text).toBe(`{"id":1,"name":"Rex","categoryId":9007199254740993,"status":"available","tags":[],"version":1}`)
    const retry = await postPet(server, REX, "retry-1")
    expect(retry.status).toBe(201)
    expect(retry.text).toBe(first.text)
    expect(retry.headers.get("location")).toBe("/v1/pets/1")
    expect(retry.headers.get("content-type")).toBe("application/json")
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    expect(JSON.parse(await listAll(server))).toHaveLength(1)
  })

  it("the same body means the same decoded pet: spacing, key order, escapes and ignored fields do not count", async () => {
    const server = freshServer()
    const first = await postPet(server, REX, "same-pet")
    const respelled = `{ "status" : "available", "id": 77, "categoryId": 9007199254740993, "name": "R\\u0065x", "tag": 1 }`
    const retry = await postPet(server, respelled, "same-pet")
    expect(retry.status).toBe(201)
    expect(retry.text).toBe(first.text)
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
  })

  it("the same key with a different body is 422 idempotency_key_reused, and nothing is stored", async () => {
    const server = freshServer()
    await postPet(server, REX, "reused")
    for (const other of [`{"name":"Max","categoryId":9007199254740993,"status":"available"}`, `{"name":"Rex","categoryId":9007199254740993}`]) {
      expectError(await postPet(server, other, "reused"), 422, "idempotency_key_reused", "Idempotency-Key")
    }
    // The key names one request across both creates.
    expectError(await postOrder(server, 1, "reused"), 422, "idempotency_key_reused")
    expect(JSON.parse(await listAll(server))).toHaveLength(1)
  })

  it("without a key every create stores a pet, and no answer says it is a replay", async () => {
    const server = freshServer()
    const a = await server.call("POST", "/v1/pets", { body: REX, headers: JSON_AUTH })
    const b = await server.call("POST", "/v1/pets", { body: REX, headers: JSON_AUTH })
    expect([a.status, b.status]).toEqual([201, 201])
    expect(b.headers.get("idempotent-replayed")).toBeNull()
    expect(JSON.parse(await listAll(server))).toHaveLength(2)
  })

  it("a malformed key is 400 invalid_request naming the header, on both creates, and stores nothing", async () => {
    const server = freshServer()
    await createPet(server, { name: "Orderable", categoryId: 1, status: "available" })
    for (const key of ["", "x".repeat(256), "two words", "tab\there", "caf\u00e9"]) {
      expectError(await postPet(server, REX, key), 400, "invalid_request", "idempotency-key")
      expectError(await postOrder(server, 1, key), 400, "invalid_request", "idempotency-key")
    }
    expect(JSON.parse(await listAll(server))).toHaveLength(1)
    expect((await postPet(server, REX, "k".repeat(255))).status).toBe(201)
    expect((await postPet(server, REX, `"8e03978e-40d5-43e8-bc93-6894a57f9324"`)).status).toBe(201)
  })

  it("a key is checked after authentication: without a valid key the answer is 401", async () => {
    const server = freshServer()
    const result = await server.call("POST", "/v1/pets", {
      body: REX,
      headers: { "content-type": "application/json", "idempotency-key": "" }
    })
    expectError(result, 401, "unauthorized")
  })

  it("while the first request still runs after the wait, a duplicate is 409 idempotency_key_in_use with Retry-After", async () => {
    const release = Effect.runSync(Deferred.make<void>())
    // The memory store, with creates held until released.
    const held = Layer.effect(
      PetRepository,
      Effect.map(Effect.service(PetRepository), (pets) =>
        PetRepository.of({ ...pets, create: (pet) => Effect.andThen(Deferred.await(release), pets.create(pet)) }))
    ).pipe(Layer.provideMerge(StoreMemory.layer))
    const server = freshServer(held)
    const first = postPet(server, REX, "slow")
    const duplicate = await postPet(server, REX, "slow")
    expectError(duplicate, 409, "idempotency_key_in_use", "still being processed")
    expect(duplicate.headers.get("retry-after")).toBe("1")
    Effect.runSync(Deferred.succeed(release, undefined))
    const answered = await first
    expect(answered.status).toBe(201)
    const retry = await postPet(server, REX, "slow")
    expect(retry.text).toBe(answered.text)
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
  }, 10_000)
})

describe("Idempotency-Key on placeOrder", () => {
  it("a retry gets the first order again; the pet has one order", async () => {
    const server = freshServer()
    await createPet(server, { name: "Ordered", categoryId: 1, status: "available" })
    const first = await postOrder(server, 1, "order-1")
    expect(first.status).toBe(201)
    expect(first.headers.get("location")).toBe("/v1/store/orders/1")
    const retry = await postOrder(server, 1, "order-1")
    expect(retry.status).toBe(201)
    expect(retry.text).toBe(first.text)
    expect(retry.headers.get("location")).toBe("/v1/store/orders/1")
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    // What the key returns is what the order reads as.
    expect((await server.call("GET", "/v1/store/orders/1", { headers: AUTH })).text).toBe(first.text)
    const orders = await server.call("GET", "/v1/store/orders", { headers: AUTH })
    expect(orders.json).toHaveLength(1)
    expectError(await postOrder(server, 2, "order-1"), 422, "idempotency_key_reused")
  })

  it("the store's refusals (409 pet_not_available, 404) are kept and replayed, even once the pet is available", async () => {
    const server = freshServer()
    await createPet(server, { name: "Sold", categoryId: 1, status: "available" })
    await postOrder(server, 1, "takes-it")
    const refused = await postOrder(server, 1, "too-late")
    expectError(refused, 409, "pet_not_available")
    expect((await server.call("POST", "/v1/store/orders/1/cancel", { headers: AUTH })).status).toBe(200)
    const replayed = await postOrder(server, 1, "too-late")
    expect(replayed.status).toBe(409)
    expect(replayed.text).toBe(refused.text)
    expect(replayed.headers.get("idempotent-replayed")).toBe("true")
    const missing = await postOrder(server, 99, "no-such-pet")
    expectError(missing, 404, "not_found")
    expect((await postOrder(server, 99, "no-such-pet")).text).toBe(missing.text)
    // A new key orders the pet that is available again.
    expect((await postOrder(server, 1, "second-try")).status).toBe(201)
  })
})

describe("Idempotency-Key on createWebhook", () => {
  // Plain http to 127.0.0.1 needs WEBHOOK_ALLOW_PRIVATE.
  const open = (store?: Parameters<typeof freshServer>[0]) => freshServer(store, { webhookAllowPrivate: true })
  const listWebhooks = async (server: TestServer) =>
    (await server.call("GET", "/v1/webhooks", { headers: AUTH })).json as ReadonlyArray<unknown>

  it("a retry with the same key and body gets the first 201 again, same id and secret, and subscribes nothing more", async () => {
    const server = open()
    const first = await postWebhook(server, HOOK, "hook-1")
    expect(first.status).toBe(201)
    expect(first.headers.get("location")).toBe("/v1/webhooks/1")
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const issued = first.json as { id: number; secret: string }
    expect(issued.secret).toMatch(/^whsec_/)
    const retry = await postWebhook(server, HOOK, "hook-1")
    expect(retry.status).toBe(201)
    expect(retry.text).toBe(first.text)
    expect(retry.headers.get("location")).toBe("/v1/webhooks/1")
    expect(retry.headers.get("content-type")).toBe("application/json")
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    expect(await listWebhooks(server)).toHaveLength(1)
  })

  it("the same body means the same decoded subscription: spacing, key order, escapes and ignored fields do not count", async () => {
    const server = open()
    const first = await postWebhook(server, HOOK, "same-hook")
    const respelled = `{ "types": ["pet.created", "order.placed"], "id": 5, "url": "http:\\/\\/127.0.0.1:9\\/hook", "extra": true }`
    const retry = await postWebhook(server, respelled, "same-hook")
    expect(retry.status).toBe(201)
    expect(retry.text).toBe(first.text)
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
  })

  it("the same key with a different body, or on another create, is 422 idempotency_key_reused, and nothing is stored", async () => {
    const server = open()
    await postWebhook(server, HOOK, "reused-hook")
    for (
      const other of [
        `{"url":"http://127.0.0.1:9/other","types":["pet.created","order.placed"]}`,
        `{"url":"http://127.0.0.1:9/hook","types":["pet.created"]}`,
        `{"url":"http://127.0.0.1:9/hook","types":["order.placed","pet.created"]}`
      ]
    ) {
      expectError(await postWebhook(server, other, "reused-hook"), 422, "idempotency_key_reused", "Idempotency-Key")
    }
    // The key names one request across every create.
    expectError(await postPet(server, REX, "reused-hook"), 422, "idempotency_key_reused")
    await postPet(server, REX, "a-pet")
    expectError(await postWebhook(server, HOOK, "a-pet"), 422, "idempotency_key_reused")
    expect(await listWebhooks(server)).toHaveLength(1)
    expect(JSON.parse(await listAll(server))).toHaveLength(1)
  })

  it("without a key every create subscribes, each with its own secret", async () => {
    const server = open()
    const a = await server.call("POST", "/v1/webhooks", { body: HOOK, headers: JSON_AUTH })
    const b = await server.call("POST", "/v1/webhooks", { body: HOOK, headers: JSON_AUTH })
    expect([a.status, b.status]).toEqual([201, 201])
    expect(b.headers.get("idempotent-replayed")).toBeNull()
    expect((b.json as { secret: string }).secret).not.toBe((a.json as { secret: string }).secret)
    expect(await listWebhooks(server)).toHaveLength(2)
  })

  it("a malformed key is 400 invalid_request naming the header, and subscribes nothing", async () => {
    const server = open()
    for (const key of ["", "x".repeat(256), "two words", "caf\u00e9"]) {
      expectError(await postWebhook(server, HOOK, key), 400, "invalid_request", "idempotency-key")
    }
    expect(await listWebhooks(server)).toHaveLength(0)
  })

  it("a refused URL is a 400 kept for no key: the same key with a URL that is allowed then subscribes", async () => {
    const strict = freshServer()
    for (let i = 0; i < 2; i++) {
      const refused = await postWebhook(strict, `{"url":"https://127.0.0.1/hook","types":["pet.created"]}`, "fix-the-url")
      expectError(refused, 400, "invalid_request", "loopback")
      expect(refused.headers.get("idempotent-replayed")).toBeNull()
    }
    // A public address, written as one: nothing to resolve.
    const allowed = `{"url":"https://93.184.215.14/hook","types":["pet.created"]}`
    const created = await postWebhook(strict, allowed, "fix-the-url")
    expect(created.status).toBe(201)
    expect(created.headers.get("idempotent-replayed")).toBeNull()
    expect((await postWebhook(strict, allowed, "fix-the-url")).text).toBe(created.text)
    expect(await listWebhooks(strict)).toHaveLength(1)
  })

  it("while the first request still runs after the wait, a duplicate is 409 idempotency_key_in_use with Retry-After", async () => {
    const release = Effect.runSync(Deferred.make<void>())
    // The memory store, with subscriptions held until released.
    const repository = await Effect.runPromise(WebhookRepositoryMemory.make)
    const held = Layer.merge(
      StoreMemory.layer,
      Layer.succeed(WebhookRepository)({
        ...repository,
        create: (request) => Effect.andThen(Deferred.await(release), repository.create(request))
      })
    )
    const server = open(held)
    const first = postWebhook(server, HOOK, "slow-hook")
    const duplicate = await postWebhook(server, HOOK, "slow-hook")
    expectError(duplicate, 409, "idempotency_key_in_use", "still being processed")
    expect(duplicate.headers.get("retry-after")).toBe("1")
    Effect.runSync(Deferred.succeed(release, undefined))
    const answered = await first
    expect(answered.status).toBe(201)
    const retry = await postWebhook(server, HOOK, "slow-hook")
    expect(retry.text).toBe(answered.text)
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    expect(await listWebhooks(server)).toHaveLength(1)
  }, 10_000)

  it("20 concurrent duplicates subscribe once, and every answer is that 201 with its secret", async () => {
    const server = open()
    const answers = await Promise.all(Array.from({ length: 20 }, () => postWebhook(server, HOOK, "burst")))
    expect(new Set(answers.map((answer) => `${answer.status} ${answer.text}`)).size).toBe(1)
    expect(answers[0]!.status).toBe(201)
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    expect(await listWebhooks(server)).toHaveLength(1)
  })
})

describe("Idempotency-Key in the OpenAPI document", () => {
  it("every create declares the optional header and its 409 and 422 answers", async () => {
    const server = freshServer()
    const document = (await server.call("GET", "/v1/openapi.json")).json as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; required?: boolean }>; responses: Record<string, unknown>; description?: string }>>
    }
    const creates = [document.paths["/pets"]!["post"]!, document.paths["/store/orders"]!["post"]!, document.paths["/webhooks"]!["post"]!]
    for (const operation of creates) {
      expect(operation.parameters).toContainEqual(expect.objectContaining({ name: "idempotency-key", in: "header", required: false }))
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["409", "422"]))
      expect(operation.description).toContain("Idempotency-Key")
    }
  })
})
