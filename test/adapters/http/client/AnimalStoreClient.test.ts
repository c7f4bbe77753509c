import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import * as ApiKeysStatic from "../../../../src/adapters/apikeys/ApiKeysStatic.ts"
import { AnimalStoreClient } from "../../../../src/adapters/http/client/AnimalStoreClient.ts"
import * as HttpApp from "../../../../src/adapters/http/server/HttpApp.ts"
import * as StoreMemory from "../../../../src/adapters/memory/StoreMemory.ts"
import { CategoryId } from "../../../../src/domain/pets/CategoryId.ts"
import { PetId } from "../../../../src/domain/pets/PetId.ts"
import { IdempotencyKey } from "../../../../src/domain/idempotency/IdempotencyKey.ts"
import { PetName } from "../../../../src/domain/pets/PetName.ts"

const KEY = "client-test-key"

// The real service on an ephemeral port.
const Server = HttpRouter.serve(
  HttpApp.layer({ production: "http://localhost/v1", staging: "http://localhost/v1" }),
  { disableLogger: true, disableListenLog: true }
).pipe(
  Layer.provide([StoreMemory.layer, ApiKeysStatic.layer([Redacted.make(KEY)])]),
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

layer(Server)("AnimalStoreClient against the real server", (it) => {
  it.effect("creates, reads and lists with int64 values exact in both directions", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const categoryId = CategoryId.make(9007199254740993n)
      const { body: created, headers } = yield* client.animals.createPet({
        headers: {},
        payload: { name: PetName.make("Rex"), categoryId, status: "available" }
      })
      assert.strictEqual(created.categoryId, 9007199254740993n)
      assert.strictEqual(headers.location, `/v1/pets/${created.id}`)
      const fetched = yield* client.animals.getPet({ params: { petId: created.id } })
      assert.deepStrictEqual(fetched, created)
      const listed = yield* client.animals.listPets({ query: { status: "available" } })
      assert.deepStrictEqual(listed.body.find((pet) => pet.id === created.id), created)
      const { body: extreme } = yield* client.animals.createPet({
        headers: {},
        payload: { name: PetName.make("Max"), categoryId: CategoryId.make(-(2n ** 63n)) }
      })
      assert.strictEqual((yield* client.animals.getPet({ params: { petId: extreme.id } })).categoryId, -(2n ** 63n))
      assert.isFalse("status" in extreme)
    }))

  it.effect("an Idempotency-Key makes a retry return the first pet; another body with it is the typed 422", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const headers = { "idempotency-key": IdempotencyKey.make("client-retry-1") }
      const payload = { name: PetName.make("Once"), categoryId: CategoryId.make(7n) }
      const first = yield* client.animals.createPet({ headers, payload })
      const retry = yield* client.animals.createPet({ headers, payload })
      assert.deepStrictEqual(retry.body, first.body)
      assert.strictEqual(retry.headers.location, first.headers.location)
      const other = yield* Effect.flip(
        client.animals.createPet({ headers, payload: { ...payload, name: PetName.make("Twice") } })
      )
      assert.strictEqual(other._tag, "IdempotencyKeyReused")
    }))

  it.effect("a missing pet fails with the typed NotFound error", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const error = yield* Effect.flip(client.animals.getPet({ params: { petId: PetId.make(424242n) } }))
      assert.strictEqual(error._tag, "NotFound")
      if (error._tag === "NotFound") {
        assert.strictEqual(error.code, "not_found")
        assert.strictEqual(error.status, 404)
      }
    }))

  it.effect("orders a pet, moves the order, and meets the typed 409s", () =>
    Effect.gen(function*() {
      const client = yield* clientWith(KEY)
      const { body: pet } = yield* client.animals.createPet({
        headers: {},
        payload: { name: PetName.make("Ordered"), categoryId: CategoryId.make(1n), status: "available" }
      })
      const { body: order, headers } = yield* client.store.placeOrder({ headers: {}, payload: { petId: pet.id } })
      assert.strictEqual(order.petId, pet.id)
      assert.strictEqual(order.status, "placed")
      assert.strictEqual(headers.location, `/v1/store/orders/${order.id}`)
      const again = yield* Effect.flip(client.store.placeOrder({ headers: {}, payload: { petId: pet.id } }))
      assert.strictEqual(again._tag, "PetNotAvailableConflict")
      const delivered = yield* Effect.flip(client.store.deliverOrder({ params: { orderId: order.id } }))
      assert.strictEqual(delivered._tag, "InvalidTransition")
      const cancelled = yield* client.store.cancelOrder({ params: { orderId: order.id } })
      assert.strictEqual(cancelled.status, "cancelled")
      assert.deepStrictEqual(yield* client.store.getOrder({ params: { orderId: order.id } }), cancelled)
      const inventory = yield* client.store.getInventory()
      assert.isAtLeast(inventory.available, 1)
    }))

  it.effect("a wrong key fails with the typed Unauthorized error", () =>
    Effect.gen(function*() {
      const client = yield* clientWith("wrong")
      const error = yield* Effect.flip(client.animals.listPets({ query: {} }))
      assert.strictEqual(error._tag, "Unauthorized")
      if (error._tag === "Unauthorized") assert.isTrue(error.invalidToken)
    }))
})
