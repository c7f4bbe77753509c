/**
 * Managed keys through the real router: a `read` key lists and gets but gets 403 on
 * every write, before its input is looked at; a `write` key does everything; API_KEYS
 * keys still work; and every refused key gets the very same 401.
 */
import { DateTime, Duration, Effect, Layer, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import * as ApiKeysCached from "../../../src/adapters/apikeys/ApiKeysCached.ts"
import { issue } from "../../../src/application/keys/KeyIssuer.ts"
import * as ApiKeyStoreMemory from "../../../src/adapters/memory/keys/ApiKeyStoreMemory.ts"
import { ApiKey } from "../../../src/domain/keys/ApiKey.ts"
import { KeyName } from "../../../src/domain/keys/KeyName.ts"
import type { KeyScope } from "../../../src/domain/keys/KeyScope.ts"
import { ApiKeyStore } from "../../../src/ports/keys/ApiKeyStore.ts"
import { API_KEY, expectError, freshServer } from "./TestServer.ts"

const now = DateTime.makeUnsafe(Date.now())
const key = (name: string, scope: KeyScope, change: Partial<ApiKey> = {}) => {
  const issued = issue({ name: KeyName.make(name), scope, lifetime: undefined }, now)
  return { text: Redacted.value(issued.key), record: new ApiKey({ ...issued.record, ...change }) }
}
const reader = key("reader", "read")
const writer = key("writer", "write")
const revoked = key("revoked", "write", { revokedAt: now })
const expired = key("expired", "write", { expiresAt: DateTime.subtractDuration(now, Duration.seconds(1)) })

// A memory key store holding the keys above, with API_KEY from the environment beside them.
const keys = ApiKeysCached.layer([Redacted.make(API_KEY)]).pipe(
  Layer.provide(Layer.effect(
    ApiKeyStore,
    Effect.tap(
      ApiKeyStoreMemory.make,
      (store) => Effect.forEach([reader, writer, revoked, expired], ({ record }) => store.insert(record))
    )
  ))
)

const server = () => freshServer(undefined, undefined, keys)
const bearer = (text: string) => ({ authorization: `Bearer ${text}` })
const json = (text: string) => ({ ...bearer(text), "content-type": "application/json" })

const WRITES = [
  ["createPet", "POST", "/v1/pets", `{"name":"Rex","categoryId":1}`],
  ["placeOrder", "POST", "/v1/store/orders", `{"petId":1}`],
  ["approveOrder", "POST", "/v1/store/orders/1/approve", undefined],
  ["deliverOrder", "POST", "/v1/store/orders/1/deliver", undefined],
  ["cancelOrder", "POST", "/v1/store/orders/1/cancel", undefined],
  ["createWebhook", "POST", "/v1/webhooks", `{"url":"https://hooks.example.com/","types":["pet.created"]}`],
  ["rotateWebhookSecret", "POST", "/v1/webhooks/1/rotate-secret", undefined],
  ["updateWebhook", "PATCH", "/v1/webhooks/1", `{"state":"active"}`],
  ["pingWebhook", "POST", "/v1/webhooks/1/ping", undefined],
  ["updatePet", "PATCH", "/v1/pets/1", `{"name":"Tom"}`],
  ["deletePet", "DELETE", "/v1/pets/1", undefined],
  ["uploadPetPhoto", "POST", "/v1/pets/1/photos", "not an image"],
  ["deletePetPhoto", "DELETE", "/v1/pets/1/photos/1", undefined]
] as const

describe("key scopes", () => {
  it("a read key lists and gets (200), a write key creates (201)", async () => {
    const api = server()
    const created = await api.call("POST", "/v1/pets", { body: `{"name":"Rex","categoryId":1}`, headers: json(writer.text) })
    expect(created.status).toBe(201)
    for (const path of ["/v1/pets", "/v1/pets/1", "/v1/store/orders", "/v1/store/inventory", "/v1/events"]) {
      expect((await api.call("GET", path, { headers: bearer(reader.text) })).status, path).toBe(200)
    }
  })

  it.each(WRITES)("a read key on %s: 403 forbidden, also with a bad body or content type; nothing changes", async (operation, method, path, body) => {
    const api = server()
    const refused = await api.call(method, path, body === undefined ? { headers: bearer(reader.text) } : { body, headers: json(reader.text) })
    expectError(refused, 403, "forbidden", "read", operation)
    // 403 comes before the input is looked at: an invalid body, or none declared as JSON, is still a 403.
    expectError(await api.call(method, path, { body: "{", headers: json(reader.text) }), 403, "forbidden")
    expectError(await api.call(method, path, { body: "x", headers: bearer(reader.text) }), 403, "forbidden")
    const badPath = method === "POST" ? "/v1/store/orders/x/approve" : "/v1/pets/x"
    expectError(await api.call(method, badPath, { headers: bearer(reader.text) }), 403, "forbidden")
    // 401 before 403.
    expectError(await api.call(method, path, { body: "{", headers: json("as_unknown") }), 401, "unauthorized")
    expect((await api.call("GET", "/v1/pets", { headers: bearer(writer.text) })).text).toBe("[]")
  })

  it("a read key cannot read webhooks either (they send the store's data out): 403", async () => {
    const api = server()
    for (const [operation, method, path] of [
      ["listWebhooks", "GET", "/v1/webhooks"],
      ["getWebhook", "GET", "/v1/webhooks/1"],
      ["listWebhookDeliveries", "GET", "/v1/webhooks/1/deliveries"],
      ["deleteWebhook", "DELETE", "/v1/webhooks/1"]
    ] as const) {
      expectError(await api.call(method, path, { headers: bearer(reader.text) }), 403, "forbidden", "read", operation)
    }
    expect((await api.call("GET", "/v1/webhooks", { headers: bearer(writer.text) })).text).toBe("[]")
  })

  it("a key from API_KEYS is still a write key", async () => {
    const api = server()
    expect((await api.call("POST", "/v1/pets", { body: `{"name":"Rex","categoryId":1}`, headers: json(API_KEY) })).status).toBe(201)
  })

  it("unknown, revoked, expired, malformed and wrong-secret keys get byte-for-byte the same 401", async () => {
    const api = server()
    const wrongSecret = `${writer.text.slice(0, -2)}${writer.text.endsWith("AA") ? "BB" : "AA"}`
    const presented = [
      key("never stored", "write").text,
      revoked.text,
      expired.text,
      "as_0123",
      "not-a-managed-key",
      wrongSecret
    ]
    const answers = await Promise.all(presented.map((text) => api.call("GET", "/v1/pets", { headers: bearer(text) })))
    const first = answers[0]!
    expectError(first, 401, "unauthorized")
    for (const answer of answers) {
      expect(answer.status).toBe(401)
      expect(answer.text).toBe(first.text)
      expect(answer.headers.get("www-authenticate")).toBe(first.headers.get("www-authenticate"))
      expect(answer.headers.get("content-type")).toBe(first.headers.get("content-type"))
    }
  })

  it("the OpenAPI document lists 403 on the write operations and not on the reads", async () => {
    const document = (await server().call("GET", "/v1/openapi.json")).json as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
    }
    const forbidden = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).filter(([, operation]) => "403" in (operation.responses ?? {})).map(([method]) => `${method} ${path}`)
    ).sort()
    expect(forbidden).toEqual([
      "delete /pets/{petId}",
      "patch /pets/{petId}",
      "post /pets",
      "post /store/orders",
      "post /store/orders/{orderId}/approve",
      "post /store/orders/{orderId}/cancel",
      "post /store/orders/{orderId}/deliver",
      "post /pets/{petId}/photos",
      "delete /pets/{petId}/photos/{photoId}",
      // A rendition's 403 is a signed URL's that is bad or expired; a read key may read it.
      "get /pets/{petId}/photos/{photoId}/{rendition}",
      // Webhooks send the store's data out: every operation needs a write key, reads included.
      "get /webhooks",
      "post /webhooks",
      "delete /webhooks/{webhookId}",
      "get /webhooks/{webhookId}",
      "get /webhooks/{webhookId}/deliveries",
      "patch /webhooks/{webhookId}",
      "post /webhooks/{webhookId}/ping",
      "post /webhooks/{webhookId}/rotate-secret"
    ].sort())
  })
})
