/**
 * The webhooks area over HTTP, in-process on the memory store: subscribing (the secret
 * shown once), reading, rotating, re-enabling, pinging, deleting, the delivery attempts'
 * pages, and the refusals.
 */
import { DateTime, Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { describe, expect, it, onTestFinished } from "vitest"
import { signatureHeaders } from "../../../src/application/webhooks/WebhookSignature.ts"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import * as WebhookRepositoryMemory from "../../../src/adapters/memory/webhooks/WebhookRepositoryMemory.ts"
import { EventId } from "../../../src/domain/events/EventId.ts"
import type { WebhookId } from "../../../src/domain/webhooks/WebhookId.ts"
import { WebhookRepository } from "../../../src/ports/webhooks/WebhookRepository.ts"
import { startReceiver, verified } from "../../e2e/WebhookReceiver.ts"
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
const MERGE_PATCH_AUTH = { ...AUTH, "content-type": "application/merge-patch+json" }
const patch = (server: TestServer, id: number, body: string, headers: Record<string, string> = MERGE_PATCH_AUTH) =>
  server.call("PATCH", `/v1/webhooks/${id}`, { headers, body })

// A server over a webhook store of the test's own, to set up what only deliveries do.
const withRepository = async () => {
  const repository = await Effect.runPromise(WebhookRepositoryMemory.make)
  const store = Layer.merge(StoreMemory.layer, Layer.succeed(WebhookRepository)(repository))
  return { repository, server: freshServer(store, { webhookAllowPrivate: true }) }
}
const T0 = DateTime.makeUnsafe("2026-05-01T10:00:00.000Z")
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
// What a dispatcher does when event 6 gets a 410 on its 3rd try: the attempt, and the subscription disabled.
const goneAt6 = (repository: WebhookRepository["Service"], id: WebhookId) =>
  run(Effect.gen(function*() {
    yield* repository.claim({ now: T0, owner: "test", until: DateTime.add(T0, { minutes: 1 }), limit: 10, heads: new Map([["pet.created", EventId.make(6n)]]) })
    yield* repository.recordAttempt(
      id,
      "test",
      { eventId: EventId.make(6n), attempt: 3, attemptedAt: T0, outcome: "gone", httpStatus: 410, durationMs: 4, error: undefined },
      { cursor: 0n, attempt: 3, nextAttemptAt: undefined, firstAttemptAt: T0 }
    )
    yield* repository.disable(id, "the receiver answered 410 Gone", T0)
    yield* repository.release(id, "test")
  }))
const progressOf = (repository: WebhookRepository["Service"], id: WebhookId) =>
  run(Effect.map(repository.pending, (pending) => pending.find((entry) => entry.webhook.id === id)?.progress))
const receiver = async () => {
  const started = await startReceiver()
  onTestFinished(() => started.close())
  return started
}

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

  it("PATCH {\"state\":\"active\"} re-enables a disabled subscription: no reason or time, its cursor where it stood, its event tried afresh", async () => {
    const { repository, server } = await withRepository()
    const { secret: _, ...issued } = (await subscribe(server, { url: "http://127.0.0.1:9/hook", types: ["pet.created"] })).json as IssuedJson
    const id = BigInt(issued.id) as WebhookId
    await goneAt6(repository, id)
    expect((await server.call("GET", "/v1/webhooks/1", { headers: AUTH })).json).toEqual({
      ...issued,
      state: "disabled",
      disabledReason: "the receiver answered 410 Gone",
      disabledAt: "2026-05-01T10:00:00.000Z"
    })
    const enabled = await patch(server, 1, `{"state":"active"}`)
    expect(enabled.status).toBe(200)
    expect(enabled.json).toEqual(issued)
    expect((await server.call("GET", "/v1/webhooks/1", { headers: AUTH })).json).toEqual(issued)
    // Resumed from its cursor (0: event 6 was never delivered), not from the log's end; the tries start again.
    expect(await progressOf(repository, id)).toEqual({ cursor: 0n, attempt: 0, nextAttemptAt: undefined })
    // The attempts stay.
    expect(((await server.call("GET", "/v1/webhooks/1/deliveries", { headers: AUTH })).json as Array<unknown>).length).toBe(1)
  })

  it("PATCH of an active subscription, or an empty patch, answers it as it is and keeps the tries of its event under way", async () => {
    const { repository, server } = await withRepository()
    const { secret: _, ...issued } = (await subscribe(server, { url: "http://127.0.0.1:9/hook", types: ["pet.created"] })).json as IssuedJson
    const id = BigInt(issued.id) as WebhookId
    const progress = { cursor: EventId.make(3n), attempt: 2, nextAttemptAt: DateTime.add(T0, { minutes: 1 }), firstAttemptAt: T0 }
    await run(Effect.gen(function*() {
      yield* repository.claim({ now: T0, owner: "test", until: DateTime.add(T0, { minutes: 1 }), limit: 10, heads: new Map([["pet.created", EventId.make(6n)]]) })
      yield* repository.advance(id, "test", progress)
      yield* repository.release(id, "test")
    }))
    for (const body of [`{"state":"active"}`, `{}`]) {
      const answer = await patch(server, 1, body)
      expect(answer.status).toBe(200)
      expect(answer.json).toEqual(issued)
    }
    // application/json is accepted too.
    expect((await patch(server, 1, `{"state":"active"}`, JSON_AUTH)).json).toEqual(issued)
    expect(await progressOf(repository, id)).toEqual(progress)
  })

  it("PATCH refuses any other field or state (400 naming it), another media type (415) and an unknown subscription (404)", async () => {
    const { repository, server } = await withRepository()
    await subscribe(server, { url: "http://127.0.0.1:9/hook", types: ["pet.created"] })
    await goneAt6(repository, 1n as WebhookId)
    expectError(await patch(server, 1, `{"state":"disabled"}`), 400, "invalid_request", "state")
    expectError(await patch(server, 1, `{"state":null}`), 400, "invalid_request", "state")
    expectError(await patch(server, 1, `{"state":"active","url":"http://127.0.0.1:9/other"}`), 400, "invalid_request", "url", "not allowed")
    expectError(await patch(server, 1, `{"types":["pet.updated"]}`), 400, "invalid_request", "types")
    expectError(await patch(server, 1, `[]`), 400, "invalid_request")
    expectError(await patch(server, 1, `{"state":"active"}`, { ...AUTH, "content-type": "text/plain" }), 415, "unsupported_media_type")
    expectError(await patch(server, 2, `{"state":"active"}`), 404, "not_found", "webhook 2")
    expectError(await patch(server, 0, `{"state":"active"}`), 400, "invalid_request", "webhookId")
    // Nothing of it re-enabled the subscription.
    expect(((await server.call("GET", "/v1/webhooks/1", { headers: AUTH })).json as { state: string }).state).toBe("disabled")
  })

  it("POST /ping sends a signed ping and answers what the receiver said; nothing is recorded, nothing moves", async () => {
    const hooks = await receiver()
    const { repository, server } = await withRepository()
    const created = (await subscribe(server, { url: hooks.url("/ok"), types: ["pet.created", "order.placed"] })).json as IssuedJson
    const { secret, ...webhook } = created
    const id = BigInt(created.id) as WebhookId
    const before = await progressOf(repository, id)
    const pinged = await server.call("POST", "/v1/webhooks/1/ping", { headers: AUTH })
    expect(pinged.status).toBe(200)
    const answer = pinged.json as { messageId: string; sentAt: string; outcome: string; httpStatus: number; durationMs: number }
    expect(answer).toEqual({
      messageId: expect.stringMatching(/^ping_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      outcome: "delivered",
      httpStatus: 204,
      durationMs: expect.any(Number)
    })
    expect(hooks.to("/ok")).toHaveLength(1)
    const [sent] = hooks.to("/ok")
    expect(sent!.headers["webhook-id"]).toBe(answer.messageId)
    // Signed with the secret shown; the body is the ping, its data the subscription as GET answers it.
    expect(verified(sent!, secret)).toEqual({ type: "ping", timestamp: answer.sentAt, data: webhook })
    // A second ping is a message of its own.
    const again = (await server.call("POST", "/v1/webhooks/1/ping", { headers: AUTH })).json as { messageId: string }
    expect(again.messageId).not.toBe(answer.messageId)
    expect(hooks.to("/ok")[1]!.headers["webhook-id"]).toBe(again.messageId)
    expect((await server.call("GET", "/v1/webhooks/1/deliveries", { headers: AUTH })).json).toEqual([])
    expect(await progressOf(repository, id)).toEqual(before)
  })

  it("a ping answered 410 disables nothing; a disabled subscription is pinged too; a receiver not there is a retry with its error", async () => {
    const hooks = await receiver()
    const { repository, server } = await withRepository()
    const gone = (await subscribe(server, { url: hooks.url("/gone"), types: ["pet.created"] })).json as IssuedJson
    const goneAnswer = await server.call("POST", `/v1/webhooks/${gone.id}/ping`, { headers: AUTH })
    expect(goneAnswer.json).toMatchObject({ outcome: "gone", httpStatus: 410 })
    expect(((await server.call("GET", `/v1/webhooks/${gone.id}`, { headers: AUTH })).json as { state: string }).state).toBe("active")

    const paused = (await subscribe(server, { url: hooks.url("/ok"), types: ["pet.created"] })).json as IssuedJson
    await run(repository.disable(BigInt(paused.id) as WebhookId, "the receiver answered 410 Gone", T0))
    expect((await server.call("POST", `/v1/webhooks/${paused.id}/ping`, { headers: AUTH })).json).toMatchObject({ outcome: "delivered", httpStatus: 204 })
    const [sent] = hooks.to("/ok")
    expect(verified(sent!, paused.secret).data).toMatchObject({ id: paused.id, state: "disabled", disabledReason: "the receiver answered 410 Gone" })
    expect(((await server.call("GET", `/v1/webhooks/${paused.id}`, { headers: AUTH })).json as { state: string }).state).toBe("disabled")

    // Port 9 (discard) on loopback: nothing listens, the connection is refused.
    const nowhere = (await subscribe(server, { url: "http://127.0.0.1:9/hook", types: ["pet.created"] })).json as IssuedJson
    const refused = (await server.call("POST", `/v1/webhooks/${nowhere.id}/ping`, { headers: AUTH })).json as Record<string, unknown>
    expect(refused).toMatchObject({ outcome: "retry", error: expect.any(String) })
    expect(refused).not.toHaveProperty("httpStatus")
    expectError(await server.call("POST", "/v1/webhooks/99/ping", { headers: AUTH }), 404, "not_found", "webhook 99")
  })

  it("the secret shown is the one deliveries are signed with", async () => {
    const server = open()
    const { secret } = (await subscribe(server, { url: "http://127.0.0.1:9/hook", types: ["pet.created"] })).json as IssuedJson
    const body = JSON.stringify({ type: "pet.created" })
    const headers = signatureHeaders({ id: "evt_1", timestamp: Math.floor(Date.now() / 1000), body }, [secret as never])
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual({ type: "pet.created" })
  })
})
