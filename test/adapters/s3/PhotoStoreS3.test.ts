import { assert, describe, it, layer } from "@effect/vitest"
import { DateTime, Duration, Effect, Exit, Layer, Option } from "effect"
import { createServer, type Socket } from "node:net"
import * as PhotoStoreS3 from "../../../src/adapters/s3/PhotoStoreS3.ts"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import * as PhotoSweep from "../../../src/application/photos/PhotoSweep.ts"
import { StoreUnavailable } from "../../../src/domain/Errors.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { NewPhoto } from "../../../src/domain/photos/Photo.ts"
import { blobKey, Rendition } from "../../../src/domain/photos/Rendition.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import { PhotoRepository } from "../../../src/ports/photos/PhotoRepository.ts"
import { PhotoStore } from "../../../src/ports/photos/PhotoStore.ts"
import { photoStoreContract } from "../../ports/photos/PhotoStoreContract.ts"
import * as S3Server from "./S3Server.ts"

const onServer = Layer.unwrap(Effect.map(S3Server.scoped, (server) => PhotoStoreS3.layer(server.options())))

// S3 keeps write times to the second.
photoStoreContract("S3 (s3rver)", onServer, { writeTimeResolution: 1000 })

// A PNG's signature: enough for the store to name its type.
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 1, 2, 3])

let n = 0
const key = (name: string) => `s3-${Date.now().toString(36)}-${++n}/${name}`

const failsUnavailable = <A>(effect: Effect.Effect<A, StoreUnavailable>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    const error = Option.getOrUndefined(Exit.findErrorOption(exit))
    assert.instanceOf(error, StoreUnavailable, "expected StoreUnavailable")
    return error!.message
  })

layer(onServer, { timeout: 30_000, excludeTestServices: true })("PhotoStoreS3: presigned URLs", (it) => {
  it.effect("a presigned URL serves the bytes, as the image type they are, with no credentials", () =>
    Effect.gen(function*() {
      const store = yield* PhotoStore
      const k = key("original")
      yield* store.put(k, PNG)
      const url = yield* store.redirectUrl!(k, Duration.minutes(5))
      assert.match(url, /X-Amz-Signature=/)
      const answer = yield* Effect.promise(() => fetch(url))
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(answer.headers.get("content-type"), "image/png")
      assert.deepStrictEqual(new Uint8Array(yield* Effect.promise(() => answer.arrayBuffer())), PNG)
    }))

  it.effect("a presigned URL lives between a second and 7 days, S3's bounds, whatever the TTL asked", () =>
    Effect.gen(function*() {
      const store = yield* PhotoStore
      const expiresOf = (url: string) => new URL(url).searchParams.get("X-Amz-Expires")
      assert.strictEqual(expiresOf(yield* store.redirectUrl!(key("a"), Duration.hours(1))), "3600")
      assert.strictEqual(expiresOf(yield* store.redirectUrl!(key("a"), Duration.days(30))), "604800")
      assert.strictEqual(expiresOf(yield* store.redirectUrl!(key("a"), Duration.millis(10))), "1")
    }))

  it.effect("a presigned URL is refused once its time is up", () =>
    Effect.gen(function*() {
      const store = yield* PhotoStore
      const k = key("thumb")
      yield* store.put(k, PNG)
      // The expiry counts from the URL's second (X-Amz-Date): 2 s leave the first fetch at
      // least one, and the wait passes the end whatever the rounding.
      const url = yield* store.redirectUrl!(k, Duration.seconds(2))
      assert.strictEqual((yield* Effect.promise(() => fetch(url))).status, 200)
      yield* Effect.sleep("3200 millis")
      assert.strictEqual((yield* Effect.promise(() => fetch(url))).status, 403)
    }))
})

describe("PhotoStoreS3: a failing object store", () => {
  it.live("a stopped server: every call fails StoreUnavailable, at once", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* S3Server.scoped
      const store = yield* PhotoStoreS3.make(server.options("5 seconds"))
      yield* store.put(key("a"), PNG)
      yield* Effect.promise(server.stop)
      const started = Date.now()
      for (
        const call of [
          store.put(key("b"), PNG),
          store.get(key("a")),
          store.delete([key("a")]),
          store.olderThan(yield* DateTime.now, 10)
        ]
      ) {
        assert.match(yield* failsUnavailable(call), /^the object store is unavailable: ECONNREFUSED/)
      }
      // Refused connections are not waited on until the deadline.
      assert.isBelow(Date.now() - started, 5_000)
    })))

  it.live("a server that accepts and never answers: StoreUnavailable at the deadline", () =>
    Effect.scoped(Effect.gen(function*() {
      const sockets = new Set<Socket>()
      const silent = createServer((socket) => sockets.add(socket))
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))),
        () =>
          Effect.promise(() => {
            for (const socket of sockets) socket.destroy()
            return new Promise<void>((resolve) => silent.close(() => resolve()))
          })
      )
      const address = silent.address()
      if (address === null || typeof address === "string") return assert.fail("no port")
      const store = yield* PhotoStoreS3.make({
        endpoint: Option.some(`http://127.0.0.1:${address.port}`),
        bucket: "photos",
        region: "us-east-1",
        timeout: "300 millis",
        credentials: { accessKeyId: "none", secretAccessKey: "none" }
      })
      for (const call of [store.put(key("c"), PNG), store.get(key("c")), store.olderThan(yield* DateTime.now, 1)]) {
        const started = Date.now()
        assert.strictEqual(yield* failsUnavailable(call), "the object store did not answer within 300ms")
        const took = Date.now() - started
        assert.isAtLeast(took, 290)
        assert.isBelow(took, 1_500)
      }
    })))

  it.live("a missing bucket is the store's failure, not a missing object", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* S3Server.scoped
      const store = yield* PhotoStoreS3.make({ ...server.options(), bucket: "no-such-bucket" })
      assert.strictEqual(yield* failsUnavailable(store.get(key("d"))), "the object store is unavailable: NoSuchBucket")
      assert.strictEqual(yield* failsUnavailable(store.put(key("d"), PNG)), "the object store is unavailable: NoSuchBucket")
    })))
})

const HASH = "A".repeat(43)

describe("PhotoStoreS3: the orphan sweep", () => {
  it.live("deletes the old bytes no record names; keeps a photo's bytes and young bytes", () =>
    Effect.gen(function*() {
      const store = yield* PhotoStore
      const keysOf = (storageKey: string) => Rendition.literals.map((rendition) => blobKey(storageKey, rendition))
      const pet = yield* Effect.flatMap(PetRepository, (pets) =>
        pets.create(new NewPet({ name: PetName.make("Tabby"), categoryId: CategoryId.make(1n) })))
      const kept = "recorded-photo-000000"
      const orphans = keysOf("crashed-upload-000000")
      for (const k of [...keysOf(kept), ...orphans]) yield* store.put(k, PNG)
      const file = { contentType: "image/png" as const, bytes: PNG.length, hash: HASH }
      yield* Effect.flatMap(PhotoRepository, (photos) =>
        photos.add(
          new NewPhoto({
            petId: pet.id,
            contentType: "image/png",
            width: 1,
            height: 1,
            bytes: PNG.length,
            storageKey: kept,
            renditions: { original: file, thumb: file, medium: file },
            createdAt: DateTime.nowUnsafe()
          })
        ))
      // Past the second of the last old write: S3 tells write times to the second.
      yield* Effect.sleep("1100 millis")
      const cutoff = yield* DateTime.now
      // An upload under way: written after the cutoff.
      const young = keysOf("upload-under-way-00000")
      for (const k of young) yield* store.put(k, PNG)
      assert.strictEqual(yield* PhotoSweep.sweep(cutoff), 3)
      for (const k of orphans) assert.isTrue(Option.isNone(yield* store.get(k)))
      for (const k of [...keysOf(kept), ...young]) assert.isTrue(Option.isSome(yield* store.get(k)))
      assert.strictEqual(yield* PhotoSweep.sweep(cutoff), 0)
    }).pipe(
      // The memory store's pets and records, and its bytes on S3.
      Effect.provide(onServer),
      Effect.provide(StoreMemory.layer)
    ), { timeout: 30_000 })
})
