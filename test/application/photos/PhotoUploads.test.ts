import { Effect, Exit, Option } from "effect"
import sharp from "sharp"
import { describe, expect, it } from "vitest"
import * as PhotoProcessorSharp from "../../../src/adapters/images/PhotoProcessorSharp.ts"
import * as PhotoRemovals from "../../../src/application/photos/PhotoRemovals.ts"
import * as PhotoUploads from "../../../src/application/photos/PhotoUploads.ts"
import { MAX_PHOTOS_PER_PET } from "../../../src/domain/photos/Photo.ts"
import { blobKey, Rendition } from "../../../src/domain/photos/Rendition.ts"
import { PhotoRepository } from "../../../src/ports/photos/PhotoRepository.ts"
import { PhotoStore } from "../../../src/ports/photos/PhotoStore.ts"
import { jpeg, png } from "../../adapters/images/TestImages.ts"
import { createHash } from "node:crypto"
import { keysOf, later, newPet, run } from "./PhotoTestStore.ts"

describe("PhotoUploads", () => {
  it("writes each rendition's bytes, then the record naming their hashes", () =>
    run(Effect.gen(function*() {
      const { upload } = yield* PhotoUploads.make
      const store = yield* PhotoStore
      const pet = yield* newPet
      const photo = yield* upload({ petId: pet.id, bytes: yield* Effect.promise(() => png(300, 200)), declared: "image/png" })
      expect([photo.contentType, photo.width, photo.height]).toEqual(["image/png", 300, 200])
      for (const rendition of Rendition.literals) {
        const bytes = Option.getOrThrow(yield* store.get(blobKey(photo.storageKey, rendition)))
        expect(photo.renditions[rendition].hash).toBe(createHash("sha256").update(bytes).digest("base64url"))
        expect(photo.renditions[rendition].bytes).toBe(bytes.length)
      }
      expect(photo.bytes).toBe(photo.renditions.original.bytes)
      const thumb = Option.getOrThrow(yield* store.get(blobKey(photo.storageKey, "thumb")))
      expect((yield* Effect.promise(() => sharp(thumb).metadata())).width).toBe(256)
    })))

  it("refuses what is not an image, or not the declared type, before any byte is stored", () =>
    run(Effect.gen(function*() {
      const { upload } = yield* PhotoUploads.make
      const store = yield* PhotoStore
      const pet = yield* newPet
      const refusals = yield* Effect.forEach([
        { bytes: new Uint8Array(0), declared: "image/png" },
        { bytes: new TextEncoder().encode("<svg xmlns='http://www.w3.org/2000/svg'/>"), declared: "image/png" },
        { bytes: yield* Effect.promise(() => png()), declared: "image/jpeg" }
      ], (body) => Effect.flip(upload({ petId: pet.id, ...body })))
      expect(refusals.map((error) => [error._tag, error.message])).toEqual([
        ["UnsupportedImage", "the body is empty; send a JPEG, PNG or WebP image"],
        ["UnsupportedImage", "the body is not a JPEG, PNG or WebP image"],
        ["UnsupportedImage", "the body is image/png, not image/jpeg as its content-type says"]
      ])
      expect(yield* store.olderThan(yield* later, 100)).toEqual([])
      // A form's file of unknown type is taken for what its bytes are.
      const photo = yield* upload({ petId: pet.id, bytes: yield* Effect.promise(() => jpeg()), declared: "application/octet-stream" })
      expect(photo.contentType).toBe("image/jpeg")
    })))

  it(`a pet at ${MAX_PHOTOS_PER_PET} photos is refused; a refused record leaves no bytes behind`, () =>
    run(Effect.gen(function*() {
      const { upload } = yield* PhotoUploads.make
      const store = yield* PhotoStore
      const pet = yield* newPet
      const bytes = yield* Effect.promise(() => jpeg(64, 64))
      // Concurrent uploads all pass the early check; the record's own check refuses the extra ones.
      const exits = yield* Effect.forEach(
        Array.from({ length: MAX_PHOTOS_PER_PET + 3 }, () => upload({ petId: pet.id, bytes, declared: "image/jpeg" })),
        Effect.exit,
        { concurrency: "unbounded" }
      )
      expect(exits.filter(Exit.isSuccess).length).toBe(MAX_PHOTOS_PER_PET)
      const stored = yield* store.olderThan(yield* later, 1000)
      expect(stored.length).toBe(MAX_PHOTOS_PER_PET * 3)
      expect(yield* Effect.flip(upload({ petId: pet.id, bytes, declared: "image/jpeg" }))).toMatchObject({ _tag: "TooManyPhotos" })
    }), { ...PhotoProcessorSharp.DEFAULTS, queue: 100 }), 60_000)

  it("a removal deletes the record, then the bytes", () =>
    run(Effect.gen(function*() {
      const { upload } = yield* PhotoUploads.make
      const remove = yield* PhotoRemovals.make
      const store = yield* PhotoStore
      const photos = yield* PhotoRepository
      const pet = yield* newPet
      const photo = yield* upload({ petId: pet.id, bytes: yield* Effect.promise(() => jpeg()), declared: "image/jpeg" })
      yield* remove(pet.id, photo.id)
      expect(yield* photos.list(pet.id)).toEqual([])
      for (const key of keysOf(photo.storageKey)) expect(Option.isNone(yield* store.get(key))).toBe(true)
    })))
})
