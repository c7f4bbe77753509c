import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import { inspect } from "node:util"
import * as ApiKeysStatic from "../../../../src/adapters/apikeys/ApiKeysStatic.ts"
import { AnimalStoreClient, type PetBody, petETag } from "../../../../src/adapters/http/client/AnimalStoreClient.ts"
import * as HttpApp from "../../../../src/adapters/http/server/HttpApp.ts"
import * as StoreMemory from "../../../../src/adapters/memory/StoreMemory.ts"
import { EventId } from "../../../../src/domain/events/EventId.ts"
import { CategoryId } from "../../../../src/domain/pets/CategoryId.ts"
import { PetId } from "../../../../src/domain/pets/PetId.ts"
import { IdempotencyKey } from "../../../../src/domain/idempotency/IdempotencyKey.ts"
import { OrderId } from "../../../../src/domain/orders/OrderId.ts"
import { PetName } from "../../../../src/domain/pets/PetName.ts"
import { SearchText } from "../../../../src/domain/pets/PetSearch.ts"
import { PetTag } from "../../../../src/domain/pets/PetTag.ts"
import { PetVersion } from "../../../../src/domain/pets/PetVersion.ts"
import { WebhookId } from "../../../../src/domain/webhooks/WebhookId.ts"
import { WebhookRepository } from "../../../../src/ports/webhooks/WebhookRepository.ts"
import { startReceiver, verified } from "../../../e2e/WebhookReceiver.ts"

const KEY = "client-test-key"

// The real service on an ephemeral port; its store stays in reach of the tests.
const Server = HttpRouter.serve(
  HttpApp.layer({ production: "http://localhost/v1", staging: "http://localhost/v1" }, { webhookAllowPrivate: true }),
  { disableLogger: true, disableListenLog: true }
).pipe(
  Layer.provide(ApiKeysStatic.layer([Redacted.make(KEY)])),
  Layer.provideMerge(StoreMemory.layer),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)

const clientWith = (apiKey: string) =>
  Effect.gen(function*() {
    const { address } = yield* HttpServer.HttpServer
    const port = address._tag === "UnixPathAddress" ? 0 : address.port
    return yield* Effect.service(AnimalStoreClient).pipe(
      Effect.provide(
        AnimalStoreClient.layer({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey }).pipe(
          Layer.provide(FetchHttpClient.layer)
        )
      )
    )
  })

// A value the client answers is plain data: no framework keys, in any rendering.
const assertPlain = (value: object, keys: ReadonlyArray<string>) => {
  assert.deepStrictEqual(Object.keys(value), keys)
  assert.notInclude(inspect(value, { depth: 5 }), "~effect")
  assert.strictEqual(Object.getPrototypeOf(value), Object.prototype)
}

const available = (name: string, categoryId = 1n) => ({
  name: PetName.make(name),
  categoryId: CategoryId.make(categoryId),
  status: "available" as const
})

layer(Server)("AnimalStoreClient against the real server", (it) => {
  it.effect("createPet(body) answers { pet, location }; getPet(id) the pet; int64 exact both ways", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const created = yield* client.createPet(available("Rex", 9007199254740993n))
      assertPlain(created, ["pet", "location", "etag"])
      assert.strictEqual(created.pet.categoryId, 9007199254740993n)
      assert.strictEqual(created.location, `/v1/pets/${created.pet.id}`)
      assert.deepStrictEqual(yield* client.getPet(created.pet.id), created.pet)
      const { pet: extreme } = yield* client.createPet({ name: PetName.make("Max"), categoryId: CategoryId.make(-(2n ** 63n)) })
      assert.strictEqual((yield* client.getPet(extreme.id)).categoryId, -(2n ** 63n))
      assert.isFalse("status" in extreme)
    }))

  it.effect("listEvents() pages the feed as { events, next }: next is the after of the following page", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const before = (yield* client.listEvents({ limit: 100 })).events
      const created = (yield* client.createPet(available("Evented", 9007199254740993n))).pet
      const placed = (yield* client.placeOrder({ petId: created.id })).order
      const after = before.length === 0 ? undefined : before[before.length - 1]!.id
      const first = yield* client.listEvents({ limit: 1, ...(after === undefined ? {} : { after }) })
      assertPlain(first, ["events", "next"])
      assert.strictEqual(first.events[0]!.type, "pet.created")
      assert.strictEqual((first.events[0]!.data as { categoryId: bigint }).categoryId, 9007199254740993n)
      assert.strictEqual(first.next, first.events[0]!.id)
      const second = yield* client.listEvents({ limit: 1, after: first.next! })
      assert.strictEqual(second.events[0]!.type, "order.placed")
      assert.strictEqual((second.events[0]!.data as { id: bigint }).id, placed.id)
      const typed = yield* client.listEvents({ type: ["order.placed"], ...(after === undefined ? {} : { after }) })
      assert.deepStrictEqual(typed.events.map((event) => event.type), ["order.placed"])
      assert.isUndefined(typed.next)
    }))

  it.effect("listPets() pages as { pets, next }: next is the Link's opaque cursor, undefined on the last page", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const mine = [
        (yield* client.createPet(available("Page-1"))).pet.id,
        (yield* client.createPet(available("Page-2"))).pet.id,
        (yield* client.createPet(available("Page-3"))).pet.id
      ]
      const first = yield* client.listPets({ limit: 2 })
      assertPlain(first, ["pets", "next"])
      assert.lengthOf(first.pets, 2)
      assert.isString(first.next)
      assert.notMatch(first.next!, /^\d+$/)
      const seen: Array<bigint> = []
      let page = first
      while (true) {
        seen.push(...page.pets.map((pet) => pet.id))
        if (page.next === undefined) break
        page = yield* client.listPets({ limit: 2, cursor: page.next })
      }
      assert.strictEqual(new Set(seen).size, seen.length)
      for (const id of mine) assert.include(seen, id)
      const all = yield* client.listPets()
      assert.isUndefined(all.next)
      assert.deepStrictEqual(all.pets.map((pet) => pet.id), seen)
      const availableOnly = yield* client.listPets({ status: "available" })
      assert.isTrue(availableOnly.pets.every((pet) => pet.status === "available"))
    }))

  it.effect("listPets({ tag, q }) filters; listTags() pages the tags in use as { tags, next }", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const tag = (text: string) => PetTag.make(text)
      const zoe = yield* client.createPet({ ...available("Zoë Client"), tags: [tag("client-cat"), tag("client-young")] })
      yield* client.createPet({ ...available("Zoo Client"), tags: [tag("client-cat")] })
      assert.deepStrictEqual(zoe.pet.tags, [tag("client-cat"), tag("client-young")])
      const found = yield* client.listPets({ tag: [tag("client-cat"), tag("client-young")], q: SearchText.make("ZOE") })
      assert.deepStrictEqual(found.pets.map((pet) => pet.id), [zoe.pet.id])
      const seen: Array<{ readonly tag: string; readonly pets: number }> = []
      let page = yield* client.listTags({ limit: 1 })
      assertPlain(page, ["tags", "next"])
      while (true) {
        seen.push(...page.tags)
        if (page.next === undefined) break
        page = yield* client.listTags({ limit: 1, cursor: page.next })
      }
      assert.deepInclude(seen, { tag: "client-cat", pets: 2 })
      assert.deepInclude(seen, { tag: "client-young", pets: 1 })
      const refused = yield* Effect.flip(client.listTags({ cursor: "not-a-cursor" }))
      assert.strictEqual(refused._tag, "InvalidRequest")
    }))

  it.effect("a cursor the service did not issue fails with the typed InvalidRequest", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const error = yield* Effect.flip(client.listPets({ cursor: "not-a-cursor" }))
      assert.strictEqual(error._tag, "InvalidRequest")
      if (error._tag === "InvalidRequest") assert.include(error.message, "cursor")
    }))

  it.effect("an idempotencyKey makes a retry return the first pet, order or webhook; another body with it is the typed 422", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const options = { idempotencyKey: IdempotencyKey.make("client-retry-1") }
      const body = { name: PetName.make("Once"), categoryId: CategoryId.make(7n) }
      const first = yield* client.createPet(body, options)
      const retry = yield* client.createPet(body, options)
      assert.deepStrictEqual(retry, first)
      const other = yield* Effect.flip(client.createPet({ ...body, name: PetName.make("Twice") }, options))
      assert.strictEqual(other._tag, "IdempotencyKeyReused")
      const placed = yield* client.placeOrder({ petId: (yield* client.createPet(available("Kept"))).pet.id }, {
        idempotencyKey: IdempotencyKey.make("client-order-1")
      })
      const replayed = yield* client.placeOrder({ petId: placed.order.petId }, {
        idempotencyKey: IdempotencyKey.make("client-order-1")
      })
      assert.deepStrictEqual(replayed, placed)
      const hook = { url: "http://127.0.0.1:9/hook", types: ["pet.created"] } as const
      const hookOptions = { idempotencyKey: IdempotencyKey.make("client-webhook-1") }
      const issued = yield* client.createWebhook(hook, hookOptions)
      assert.deepStrictEqual(yield* client.createWebhook(hook, hookOptions), issued)
      const reused = yield* Effect.flip(client.createWebhook({ ...hook, types: ["pet.updated"] }, hookOptions))
      assert.strictEqual(reused._tag, "IdempotencyKeyReused")
    }))

  it.effect("a missing pet fails with the typed NotFound error", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const error = yield* Effect.flip(client.getPet(PetId.make(424242n)))
      assert.strictEqual(error._tag, "NotFound")
      if (error._tag === "NotFound") {
        assert.strictEqual(error.code, "not_found")
        assert.strictEqual(error.status, 404)
      }
      assert.strictEqual((yield* Effect.flip(client.getOrder(OrderId.make(424242n))))._tag, "NotFound")
    }))

  it.effect("places, reads, approves, delivers, cancels and lists orders, and meets the typed 409s", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const { pet } = yield* client.createPet(available("Ordered"))
      const placed = yield* client.placeOrder({ petId: pet.id })
      assertPlain(placed, ["order", "location"])
      assert.strictEqual(placed.order.petId, pet.id)
      assert.strictEqual(placed.order.status, "placed")
      assert.strictEqual(placed.location, `/v1/store/orders/${placed.order.id}`)
      assert.strictEqual((yield* Effect.flip(client.placeOrder({ petId: pet.id })))._tag, "PetNotAvailableConflict")
      assert.strictEqual((yield* Effect.flip(client.deliverOrder(placed.order.id)))._tag, "InvalidTransition")
      const approved = yield* client.approveOrder(placed.order.id)
      assert.strictEqual(approved.status, "approved")
      const delivered = yield* client.deliverOrder(placed.order.id)
      assert.strictEqual(delivered.status, "delivered")
      assert.isTrue(delivered.complete)
      assert.deepStrictEqual(yield* client.getOrder(placed.order.id), delivered)

      const { pet: other } = yield* client.createPet(available("Cancelled"))
      const { order } = yield* client.placeOrder({ petId: other.id })
      const cancelled = yield* client.cancelOrder(order.id)
      assert.strictEqual(cancelled.status, "cancelled")
      assert.deepStrictEqual(yield* client.getOrder(order.id), cancelled)

      const first = yield* client.listOrders({ limit: 1 })
      assertPlain(first, ["orders", "next"])
      assert.lengthOf(first.orders, 1)
      const second = yield* client.listOrders({ limit: 1, cursor: first.next })
      assert.notStrictEqual(second.orders[0]!.id, first.orders[0]!.id)
      const forPet = yield* client.listOrders({ petId: other.id })
      assert.deepStrictEqual(forPet, { orders: [cancelled], next: undefined })
    }))

  it.effect("getInventory() counts pets by status", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const before = yield* client.getInventory()
      yield* client.createPet(available("Counted"))
      const after = yield* client.getInventory()
      assertPlain(after, ["available", "pending", "sold", "none"])
      assert.strictEqual(after.available, before.available + 1)
    }))

  it.effect("every pet answered carries its version, whose petETag is the pet's ETag", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const created = yield* client.createPet(available("Versioned"))
      assert.strictEqual(created.pet.version, 1)
      assert.strictEqual(petETag(created.pet), created.etag)
      const updated = yield* client.updatePet(created.pet.id, { name: PetName.make("Versioned II") })
      assert.strictEqual(updated.pet.version, 2)
      assert.strictEqual(petETag(updated.pet), updated.etag)
      assert.deepStrictEqual(yield* client.getPet(created.pet.id), updated.pet)
      const listed = (yield* client.listPets({ limit: 100 })).pets.find((pet) => pet.id === created.pet.id)
      assert.deepStrictEqual(listed, updated.pet)
    }))

  it.effect("read-modify-write from a list: a listed pet's petETag is the If-Match of its update, with neither getPet nor raw", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const { pet } = yield* client.createPet(available("Listed", 5n))
      // Every page, as a client that holds no id would read the list.
      const read = Effect.gen(function*() {
        const found: Array<PetBody> = []
        let page = yield* client.listPets({ status: "available", limit: 5 })
        while (true) {
          found.push(...page.pets.filter((each) => each.id === pet.id))
          if (page.next === undefined) break
          page = yield* client.listPets({ status: "available", limit: 5, cursor: page.next })
        }
        assert.lengthOf(found, 1)
        return found[0]!
      })
      const first = yield* read
      const renamed = yield* client.updatePet(first.id, { name: PetName.make(`${first.name} II`) }, { ifMatch: petETag(first) })
      assert.strictEqual(renamed.pet.name, "Listed II")
      // What was read before that change no longer names the pet: the change is refused, nothing moves.
      const stale = yield* Effect.flip(client.updatePet(first.id, { categoryId: CategoryId.make(6n) }, { ifMatch: petETag(first) }))
      assert.strictEqual(stale._tag, "PreconditionFailed")
      // Read again, modify, write.
      const second = yield* read
      assert.deepStrictEqual(second, renamed.pet)
      const moved = yield* client.updatePet(second.id, { categoryId: CategoryId.make(second.categoryId + 1n) }, { ifMatch: petETag(second) })
      assert.strictEqual(moved.pet.categoryId, 6n)
      assert.strictEqual(moved.pet.version, second.version + 1)
    }))

  it.effect("updatePet patches with an optional ifMatch; deletePet retires; stale tags and open orders are typed errors", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const created = yield* client.createPet(available("Patchy", 9007199254740993n))
      const updated = yield* client.updatePet(created.pet.id, { name: PetName.make("Patched"), status: null }, {
        ifMatch: created.etag
      })
      assertPlain(updated, ["pet", "etag"])
      assert.deepStrictEqual(updated.pet, {
        id: created.pet.id,
        name: PetName.make("Patched"),
        categoryId: CategoryId.make(9007199254740993n),
        tags: [],
        version: PetVersion.make(2)
      })
      assert.notStrictEqual(updated.etag, created.etag)
      const stale = yield* Effect.flip(client.updatePet(created.pet.id, { name: PetName.make("Late") }, { ifMatch: created.etag }))
      assert.strictEqual(stale._tag, "PreconditionFailed")
      assert.strictEqual((yield* Effect.flip(client.deletePet(created.pet.id, { ifMatch: created.etag })))._tag, "PreconditionFailed")
      const ordered = yield* client.createPet(available("Ordered"))
      yield* client.placeOrder({ petId: ordered.pet.id })
      const owned = yield* Effect.flip(client.deletePet(ordered.pet.id))
      assert.strictEqual(owned._tag, "PetHasOpenOrderConflict")
      yield* client.deletePet(created.pet.id, { ifMatch: updated.etag })
      assert.strictEqual((yield* Effect.flip(client.getPet(created.pet.id)))._tag, "NotFound")
    }))

  it.effect("a wrong key fails with the typed Unauthorized error", () =>
    Effect.gen(function*() {
      const client = yield* clientWith("wrong")
      const error = yield* Effect.flip(client.listPets())
      assert.strictEqual(error._tag, "Unauthorized")
      if (error._tag === "Unauthorized") assert.isTrue(error.invalidToken)
    }))

  it.effect("raw is effect's HttpApiClient for the same API (the 1.x shape)", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const { pet } = yield* client.createPet(available("Raw"))
      assert.deepStrictEqual(yield* client.raw.animals.getPet({ params: { petId: pet.id } }), pet)
    }))

  it.effect("webhooks: create shows the secret once, list and get do not; rotate, deliveries, delete", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const issued = yield* client.createWebhook({ url: "http://127.0.0.1:9/hook", types: ["pet.created"] })
      assert.match(issued.secret, /^whsec_/)
      const { secret: _, ...webhook } = issued
      assert.deepStrictEqual(yield* client.getWebhook(issued.id), webhook)
      assert.deepStrictEqual((yield* client.listWebhooks()).find((each) => each.id === issued.id), webhook)
      const rotated = yield* client.rotateWebhookSecret(issued.id)
      assert.notStrictEqual(rotated.secret, issued.secret)
      assert.deepStrictEqual(yield* client.listWebhookDeliveries(issued.id), { deliveries: [], next: undefined })
      yield* client.deleteWebhook(issued.id)
      const error = yield* Effect.flip(client.getWebhook(issued.id))
      assert.strictEqual(error._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(client.deleteWebhook(WebhookId.make(999n))))._tag, "NotFound")
    }))

  it.effect("updateWebhook(id, { state: \"active\" }) re-enables a disabled webhook; pingWebhook(id) answers what its receiver said", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const repository = yield* WebhookRepository
      const hooks = yield* Effect.acquireRelease(Effect.promise(() => startReceiver()), (receiver) => Effect.promise(() => receiver.close()))
      const issued = yield* client.createWebhook({ url: hooks.url("/ok"), types: ["pet.created"] })
      const { secret, ...webhook } = issued
      yield* repository.disable(issued.id, "the receiver answered 410 Gone", DateTime.makeUnsafe("2026-05-01T10:00:00.000Z"))
      assert.strictEqual((yield* client.getWebhook(issued.id)).state, "disabled")
      const enabled = yield* client.updateWebhook(issued.id, { state: "active" })
      assert.deepStrictEqual(enabled, webhook)
      assertPlain(enabled, ["id", "url", "types", "createdAt", "state"])
      assert.deepStrictEqual(yield* client.getWebhook(issued.id), webhook)

      const pinged = yield* client.pingWebhook(issued.id)
      assertPlain(pinged, ["messageId", "sentAt", "outcome", "httpStatus", "durationMs"])
      assert.match(pinged.messageId, /^ping_/)
      assert.strictEqual(pinged.outcome, "delivered")
      assert.strictEqual(pinged.httpStatus, 204)
      assert.isNumber(pinged.durationMs)
      const [sent] = hooks.to("/ok")
      assert.strictEqual(sent?.headers["webhook-id"], pinged.messageId)
      assert.strictEqual(verified(sent!, secret).type, "ping")
      assert.strictEqual((yield* Effect.flip(client.pingWebhook(WebhookId.make(999n))))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(client.updateWebhook(WebhookId.make(999n), { state: "active" })))._tag, "NotFound")
    }))

  it.effect("listWebhookDeliveries() pages the recorded attempts, their counts, statuses and durations as numbers", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const repository = yield* WebhookRepository
      const issued = yield* client.createWebhook({ url: "http://127.0.0.1:9/attempts", types: ["pet.created"] })
      const at = DateTime.makeUnsafe("2026-05-01T10:00:00.000Z")
      // Leased as a dispatcher leases it before it records; the claim's others are released at once.
      const claimed = yield* repository.claim({
        now: at,
        owner: "client-test",
        until: DateTime.add(at, { minutes: 1 }),
        limit: 1000,
        heads: new Map([["pet.created", EventId.make(1n << 40n)]])
      })
      yield* Effect.forEach(claimed.filter((target) => target.webhook.id !== issued.id), (target) =>
        repository.release(target.webhook.id, "client-test"))
      const retried = yield* repository.recordAttempt(
        issued.id,
        "client-test",
        { eventId: EventId.make(7n), attempt: 1, attemptedAt: at, outcome: "retry", httpStatus: 503, durationMs: 40, error: "503 Service Unavailable" },
        { cursor: 0n, attempt: 1, nextAttemptAt: undefined }
      )
      yield* repository.recordAttempt(
        issued.id,
        "client-test",
        { eventId: EventId.make(7n), attempt: 2, attemptedAt: at, outcome: "delivered", httpStatus: 204, durationMs: 3, error: undefined },
        { cursor: EventId.make(7n), attempt: 0, nextAttemptAt: undefined }
      )
      yield* repository.release(issued.id, "client-test")
      const first = yield* client.listWebhookDeliveries(issued.id, { limit: 1 })
      assertPlain(first, ["deliveries", "next"])
      assert.deepStrictEqual(first.deliveries, [{
        id: retried.id,
        eventId: EventId.make(7n),
        attempt: 1,
        attemptedAt: at,
        outcome: "retry",
        httpStatus: 503,
        durationMs: 40,
        error: "503 Service Unavailable"
      }])
      const second = yield* client.listWebhookDeliveries(issued.id, { limit: 1, cursor: first.next })
      assert.deepStrictEqual(second.deliveries.map((each) => [each.attempt, each.outcome, each.httpStatus]), [[2, "delivered", 204]])
      assert.isUndefined((yield* client.listWebhookDeliveries(issued.id, { cursor: second.next })).next)
    }))
})
