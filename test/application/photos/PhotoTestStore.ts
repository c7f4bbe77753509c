/** The photo use cases' tests' store: memory, with sharp processing, and what they make in it. */
import { DateTime, Effect, Layer } from "effect"
import * as PhotoProcessorSharp from "../../../src/adapters/images/PhotoProcessorSharp.ts"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { blobKey, Rendition } from "../../../src/domain/photos/Rendition.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import type { PhotoProcessor } from "../../../src/ports/photos/PhotoProcessor.ts"
import type { PhotoRepository } from "../../../src/ports/photos/PhotoRepository.ts"
import type { PhotoStore } from "../../../src/ports/photos/PhotoStore.ts"

/** Runs `effect` on a fresh memory store with sharp processing of `processing`. */
export const run = <A, E>(
  effect: Effect.Effect<A, E, PetRepository | PhotoRepository | PhotoStore | PhotoProcessor>,
  processing = PhotoProcessorSharp.DEFAULTS
) => Effect.runPromise(Effect.provide(effect, Layer.merge(StoreMemory.layer, PhotoProcessorSharp.layer(processing))))

export const newPet = Effect.flatMap(PetRepository, (pets) =>
  pets.create(new NewPet({ name: PetName.make("Tabby"), categoryId: CategoryId.make(1n) })))

/** The PhotoStore keys of every rendition under `storageKey`. */
export const keysOf = (storageKey: string) => Rendition.literals.map((rendition) => blobKey(storageKey, rendition))

/** A minute from now: a sweep's cutoff that counts everything written so far as old. */
export const later = Effect.map(DateTime.now, (now) => DateTime.add(now, { minutes: 1 }))
