import { Effect } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { PetId } from "../../domain/pets/PetId.ts"
import type { PhotoNotFound } from "../../domain/photos/PhotoErrors.ts"
import type { PhotoId } from "../../domain/photos/PhotoId.ts"
import { blobKey, Rendition } from "../../domain/photos/Rendition.ts"
import { PhotoRepository } from "../../ports/photos/PhotoRepository.ts"
import { PhotoStore } from "../../ports/photos/PhotoStore.ts"

/**
 * Removes a photo: the record first (with its event), then its bytes. A failure after
 * the record is gone leaves only bytes without a record, which the orphan sweep removes:
 * the removal has happened for every reader.
 */
export const make = Effect.gen(function*() {
  const repository = yield* PhotoRepository
  const store = yield* PhotoStore
  return (petId: PetId, id: PhotoId): Effect.Effect<void, PhotoNotFound | StoreUnavailable> =>
    Effect.flatMap(repository.remove(petId, id), (photo) =>
      store.delete(Rendition.literals.map((rendition) => blobKey(photo.storageKey, rendition))).pipe(
        Effect.ignore({ log: "Warn", message: "Deleting a removed photo's bytes failed; the orphan sweep will" })
      ))
})
