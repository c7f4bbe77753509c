/** The typed client's photo operations against the real service: an upload from a Blob and from bytes. */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import sharp from "sharp"
import * as ApiKeysStatic from "../../../../src/adapters/apikeys/ApiKeysStatic.ts"
import { AnimalStoreClient } from "../../../../src/adapters/http/client/AnimalStoreClient.ts"
import * as HttpApp from "../../../../src/adapters/http/server/HttpApp.ts"
import * as PhotoProcessorSharp from "../../../../src/adapters/images/PhotoProcessorSharp.ts"
import * as StoreMemory from "../../../../src/adapters/memory/StoreMemory.ts"
import { CategoryId } from "../../../../src/domain/pets/CategoryId.ts"
import { PetName } from "../../../../src/domain/pets/PetName.ts"
import { IdempotencyKey } from "../../../../src/domain/idempotency/IdempotencyKey.ts"
import { jpeg, png } from "../../images/TestImages.ts"

const KEY = "client-photos-key"

const Server = HttpRouter.serve(
  HttpApp.layer({ production: "http://localhost/v1", staging: "http://localhost/v1" }),
  { disableLogger: true, disableListenLog: true }
).pipe(
  Layer.provide([ApiKeysStatic.layer([Redacted.make(KEY)]), PhotoProcessorSharp.layer()]),
  Layer.provideMerge(StoreMemory.layer),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)

const client = Effect.gen(function*() {
  const { address } = yield* HttpServer.HttpServer
  const port = address._tag === "UnixPathAddress" ? 0 : address.port
  return yield* Effect.service(AnimalStoreClient).pipe(
    Effect.provide(
      AnimalStoreClient.layer({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: KEY }).pipe(Layer.provide(FetchHttpClient.layer))
    )
  )
})

layer(Server, { timeout: 60_000 })("AnimalStoreClient photos against the real server", (it) => {
  it.effect("uploads from a Blob and from bytes, lists them in order, deletes one; a signed URL reads without a key", () =>
    Effect.gen(function*() {
      const api = yield* client
      const { pet } = yield* api.createPet({ name: PetName.make("Tabby"), categoryId: CategoryId.make(1n) })
      const blob = new Blob([new Uint8Array(yield* Effect.promise(() => png(320, 240)))], { type: "image/png" })
      const fromBlob = yield* api.uploadPetPhoto(pet.id, blob, { fileName: "tabby.png" })
      assert.strictEqual(fromBlob.photo.contentType, "image/png")
      assert.deepStrictEqual([fromBlob.photo.width, fromBlob.photo.height], [320, 240])
      assert.strictEqual(fromBlob.location, `/v1/pets/${pet.id}/photos/${fromBlob.photo.id}/original`)
      const bytes = new Uint8Array(yield* Effect.promise(() => jpeg(64, 48)))
      const key = IdempotencyKey.make("client-photo-1")
      const fromBytes = yield* api.uploadPetPhoto(pet.id, bytes, { contentType: "image/jpeg", idempotencyKey: key })
      // The same key and bytes: the first answer again, no second photo.
      assert.deepStrictEqual(yield* api.uploadPetPhoto(pet.id, bytes, { contentType: "image/jpeg", idempotencyKey: key }), fromBytes)
      assert.deepStrictEqual((yield* api.listPetPhotos(pet.id)).map((photo) => photo.id), [fromBlob.photo.id, fromBytes.photo.id])

      const { address } = yield* HttpServer.HttpServer
      const base = `http://127.0.0.1:${address._tag === "UnixPathAddress" ? 0 : address.port}`
      const thumb = yield* Effect.promise(() => fetch(`${base}${fromBytes.photo.urls.thumb}`).then((r) => r.arrayBuffer()))
      assert.strictEqual((yield* Effect.promise(() => sharp(Buffer.from(thumb)).metadata())).format, "webp")

      yield* api.deletePetPhoto(pet.id, fromBlob.photo.id)
      assert.deepStrictEqual((yield* api.listPetPhotos(pet.id)).map((photo) => photo.id), [fromBytes.photo.id])
      // A refusal is the typed error of its status.
      const refused = yield* Effect.flip(api.uploadPetPhoto(pet.id, new TextEncoder().encode("not an image")))
      assert.strictEqual(refused._tag, "UnsupportedMediaType")
    }))
})
