/**
 * The webhooks area over HTTP, in-process on the memory store: subscribing (the secret
 * shown once), reading, rotating, deleting, the delivery attempts' pages, and the refusals.
 */
import { DateTime, Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import { signatureHeaders } from "../../../src/application/webhooks/WebhookSignature.ts"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import * as WebhookRepositoryMemory from "../../../src/adapters/memory/webhooks/WebhookRepositoryMemory.ts"
import { EventId } from "../../../src/domain/events/EventId.ts"
import type { WebhookId } from "../../../src/domain/webhooks/WebhookId.ts"
import { WebhookRepository } from "../../../src/ports/webhooks/WebhookRepository.ts"
import { AUTH, expectError, freshServer, JSON_AUTH, type TestServer } from "./TestServer.ts"

interface IssuedJson {
  readonly id: number
  readonly url: string
  readonly types: ReadonlyArray<string>
  readonly createdAt: string
  readonly state: string
  readonly secret: string
}

// Plain http to 127.0.0.1 needs WEBHOOK_ALLOW_PRIVATE; the strict server is the default.
const open = () => freshServer(undefined, { webhookAllowPrivate: true })
const subscribe = (server: TestServer, body: unknown) =>
  server.call("POST", "/v1/webhooks", { headers: JSON_AUTH, body: JSON.stringify(body) })

describe("webhooks over HTTP", () => {
  it("a subscription is created with its secret shown once; reads never show it", async () => {
    const server = open()
    const created = await subscribe(server, { url: "http://127.0.0.1:9/hook", types: ["pet.created", "order.placed"] })
    expect(created.status).toBe(201)
    const issued = created.json as IssuedJson
    expect(issued).toMatchObject({ id: 1, url: "http://127.0.0.1:9/hook", types: ["pet.created", "order.placed"], state: "active" })
    expect(issued.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(created.headers.get("location")).toBe("/v1/webhooks/1")
    const got = await server.call("GET", "/v1/webhooks/1", { headers: AUTH })
    expect(got.status).toBe(200)
    const { secret: _, ...withoutSecret } = issued
    expect(got.json).toEqual(withoutSecret)
    const listed = await server.call("GET", "/v1/webhooks", { headers: AUTH })
    expect(listed.json).toEqual([withoutSecret])
    expect(listed.text).not.toContain(issued.secret)
  })

  it("rotating shows a new secret once; delete answers 204, then the subscription is not found", async () => {
    const server = open()
    const { secret } = (await subscribe(server, { url: "http://127.0.0.1:9/hook", types: ["pet.updated"] })).json as IssuedJson
    const rotated = await server.call("POST", "/v1/webhooks/1/rotate-secret", { headers: AUTH })
    expect(rotated.status).toBe(200)
    const next = rotated.json as IssuedJson
    expect(next.secret).toMatch(/^whsec_/)
    expect(next.secret).not.toBe(secret)
    const deleted = await server.call("DELETE", "/v1/webhooks/1", { headers: AUTH })
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    expectError(await server.call("GET", "/v1/webhooks/1", { headers: AUTH }), 404, "not_found", "webhook 1")
    expectError(await server.call("DELETE", "/v1/webhooks/1", { headers: AUTH }), 404, "not_found")
    expectError(await server.call("POST", "/v1/webhooks/1/rotate-secret", { headers: AUTH }), 404, "not_found")
    expectError(await server.call("GET", "/v1/webhooks/1/deliveries", { headers: AUTH }), 404, "not_found")
  })

  it("refuses a URL that breaks the rules, or points at a private address, and bad types: 400 naming the field", async () => {
    const strict = freshServer()
    expectError(await subscribe(strict, { url: "http://hooks.example.com/", types: ["pet.created"] }), 400, "invalid_request", "url", "https")
    expectError(await subscribe(strict, { url: "https://127.0.0.1/hook", types: ["pet.created"] }), 400, "invalid_request", "loopback")
    expectError(await subscribe(strict, { url: "https://[::ffff:10.0.0.1]/", types: ["pet.created"] }), 400, "invalid_request", "private")
    expectError(await subscribe(strict, { url: "https://localhost/", types: ["pet.created"] }), 400, "invalid_request", "loopback")
    expectError(await subscribe(strict, { url: "https://u:p@hooks.example.com/", types: ["pet.created"] }), 400, "invalid_request", "password")
    expectError(await subscribe(strict, { url: "https://hooks.example.com/", types: [] }), 400, "invalid_request", "types")
    expectError(await subscribe(strict, { url: "https://hooks.example.com/", types: ["pet.eaten"] }), 400, "invalid_request", "types")
    expectError(await subscribe(strict, { types: ["pet.created"] }), 400, "invalid_request", "url")
    expect((await strict.call("GET", "/v1/webhooks", { headers: AUTH })).json).toEqual([])
  })

  it("lists a subscription's delivery attempts in keyset pages", async () => {
    const repository = await Effect.runPromise(WebhookRepositoryMemory.make)
    const store = Layer.merge(StoreMemory.layer, Layer.succeed(WebhookRepository)(repository))
    const server = freshServer(store, { webhookAllowPrivate: true })
    const { id } = (await subscribe(server, { url: "http://127.0.0.1:9/hook", types: ["pet.created"] })).json as IssuedJson
    const at = DateTime.makeUnsafe("2026-05-01T10:00:00.000Z")
    await Effect.runPromise(repository.claim({
      now: at,
      owner: "test",
      until: DateTime.add(at, { minutes: 1 }),
      limit: 1,
      heads: new Map([["pet.created", EventId.make(1n)]])
    }))
    for (const eventId of [1n, 2n, 3n]) {
      await Effect.runPromise(repository.recordAttempt(
        BigInt(id) as WebhookId,
        "test",
        { eventId: eventId as EventId, attempt: 1, attemptedAt: at, outcome: "retry", httpStatus: 503, durationMs: 40, error: "503 Service Unavailable" },
        { cursor: 0n, attempt: 1, nextAttemptAt: undefined }
      ))
    }
    const first = await server.call("GET", `/v1/webhooks/${id}/deliveries?limit=2`, { headers: AUTH })
    expect(first.status).toBe(200)
    expect(first.json).toEqual([
      { id: 1, eventId: 1, attempt: 1, attemptedAt: "2026-05-01T10:00:00.000Z", outcome: "retry", httpStatus: 503, durationMs: 40, error: "503 Service Unavailable" },
      { id: 2, eventId: 2, attempt: 1, attemptedAt: "2026-05-01T10:00:00.000Z", outcome: "retry", httpStatus: 503, durationMs: 40, error: "503 Service Unavailable" }
    ])
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get("link") ?? "")?.[1]
    expect(next).toMatch(new RegExp(`^/v1/webhooks/${id}/deliveries\\?limit=2&cursor=`))
    const second = await server.call("GET", next!, { headers: AUTH })
    expect((second.json as ReadonlyArray<{ eventId: number }>).map((attempt) => attempt.eventId)).toEqual([3])
    expect(second.headers.get("link")).toBeNull()
    expectError(await server.call("GET", `/v1/webhooks/${id}/deliveries?cursor=x`, { headers: AUTH }), 400, "invalid_request", "cursor")
  })

  it("the secret shown is the one deliveries are signed with", async () => {
    const server = open()
    const { secret } = (await subscribe(server, { url: "http://127.0.0.1:9/hook", types: ["pet.created"] })).json as IssuedJson
    const body = JSON.stringify({ type: "pet.created" })
    const headers = signatureHeaders({ id: "evt_1", timestamp: Math.floor(Date.now() / 1000), body }, [secret as never])
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual({ type: "pet.created" })
  })
})
