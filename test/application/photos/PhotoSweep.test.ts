import { DateTime, Effect, Layer, Option } from "effect"
import { describe, expect, it } from "vitest"
import * as PhotoProcessorSharp from "../../../src/adapters/images/PhotoProcessorSharp.ts"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import * as PhotoSweep from "../../../src/application/photos/PhotoSweep.ts"
import * as PhotoUploads from "../../../src/application/photos/PhotoUploads.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { blobKey, Rendition } from "../../../src/domain/photos/Rendition.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import type { PhotoProcessor } from "../../../src/ports/photos/PhotoProcessor.ts"
import { PhotoRepository } from "../../../src/ports/photos/PhotoRepository.ts"
import { PhotoStore } from "../../../src/ports/photos/PhotoStore.ts"
import { jpeg } from "../../adapters/images/TestImages.ts"

const run = <A, E>(
  effect: Effect.Effect<A, E, PetRepository | PhotoRepository | PhotoStore | PhotoProcessor>,
  processing = PhotoProcessorSharp.DEFAULTS
) => Effect.runPromise(Effect.provide(effect, Layer.merge(StoreMemory.layer, PhotoProcessorSharp.layer(processing))))
const newPet = Effect.flatMap(PetRepository, (pets) =>
  pets.create(new NewPet({ name: PetName.make("Tabby"), categoryId: CategoryId.make(1n) })))
const keysOf = (storageKey: string) => Rendition.literals.map((rendition) => blobKey(storageKey, rendition))
const later = Effect.map(DateTime.now, (now) => DateTime.add(now, { minutes: 1 }))

describe("PhotoSweep", () => {
  it("deletes old bytes that no record names, and keeps a photo's bytes and young bytes", () =>
    run(Effect.gen(function*() {
      const { upload } = yield* PhotoUploads.make
      const store = yield* PhotoStore
      const pet = yield* newPet
      const photo = yield* upload({ petId: pet.id, bytes: yield* Effect.promise(() => jpeg()), declared: "image/jpeg" })
      // An upload that stopped between its bytes and its record: bytes, no record.
      const orphans = keysOf("crashed-upload-0000000")
      for (const key of orphans) yield* store.put(key, Uint8Array.of(1, 2, 3))
      yield* Effect.sleep("20 millis")
      const cutoff = yield* later
      yield* Effect.sleep("20 millis")
      // An upload under way, younger than the grace period.
      const young = keysOf("upload-under-way-00000")
      for (const key of young) yield* store.put(key, Uint8Array.of(4))
      expect(yield* PhotoSweep.sweep(DateTime.subtract(cutoff, { minutes: 1 }))).toBe(3)
      for (const key of orphans) expect(Option.isNone(yield* store.get(key))).toBe(true)
      for (const key of [...keysOf(photo.storageKey), ...young]) expect(Option.isSome(yield* store.get(key))).toBe(true)
      // Nothing left to sweep: a second pass deletes nothing.
      expect(yield* PhotoSweep.sweep(DateTime.subtract(cutoff, { minutes: 1 }))).toBe(0)
    })))
})
