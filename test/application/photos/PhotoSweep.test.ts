import { DateTime, Effect, Option } from "effect"
import { describe, expect, it } from "vitest"
import * as PhotoSweep from "../../../src/application/photos/PhotoSweep.ts"
import * as PhotoUploads from "../../../src/application/photos/PhotoUploads.ts"
import { PhotoStore } from "../../../src/ports/photos/PhotoStore.ts"
import { jpeg } from "../../adapters/images/TestImages.ts"
import { keysOf, later, newPet, run } from "./PhotoTestStore.ts"

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
