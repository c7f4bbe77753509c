import { Context, type Effect } from "effect"
import type { PetNotFound, StoreUnavailable } from "../../domain/Errors.ts"
import type { PetId } from "../../domain/pets/PetId.ts"
import type { NewPhoto, Photo } from "../../domain/photos/Photo.ts"
import type { PhotoNotFound, TooManyPhotos } from "../../domain/photos/PhotoErrors.ts"
import type { PhotoId } from "../../domain/photos/PhotoId.ts"

/**
 * The records of pets' photos (their bytes are a PhotoStore's). Every adapter passes the
 * same contract suite: ids increase in upload order, and each change is one atomic step
 * with its event (`pet.photo_added`, `pet.photo_removed`).
 *
 * A retired pet keeps its photos, for as long as its orders are readable (always): they
 * are listed, read and removed as a live pet's are, but none is added. A pet that never
 * existed, or a retired one without photos, is PetNotFound.
 */
export class PhotoRepository extends Context.Service<PhotoRepository, {
  /**
   * Records a photo of a live pet, with its `pet.photo_added` event, unless the pet
   * already has MAX_PHOTOS_PER_PET: the count and the insert are one step, so concurrent
   * uploads never pass the limit.
   */
  readonly add: (photo: NewPhoto) => Effect.Effect<Photo, PetNotFound | TooManyPhotos | StoreUnavailable>
  /** The pet's photos in upload order (ascending id). */
  readonly list: (petId: PetId) => Effect.Effect<ReadonlyArray<Photo>, PetNotFound | StoreUnavailable>
  readonly get: (petId: PetId, id: PhotoId) => Effect.Effect<Photo, PhotoNotFound | StoreUnavailable>
  /** Removes the record, with its `pet.photo_removed` event, and answers it: its bytes are the caller's to delete. */
  readonly remove: (petId: PetId, id: PhotoId) => Effect.Effect<Photo, PhotoNotFound | StoreUnavailable>
  /** Which of `storageKeys` a record holds: the orphan sweep deletes the bytes of the others. */
  readonly referenced: (storageKeys: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>, StoreUnavailable>
  /**
   * A random secret the store made the first time it was asked, the same for every
   * instance on the store and across restarts: the photo URLs' signing secret when the
   * operator configures none, so that instances behind one load balancer accept each
   * other's URLs.
   */
  readonly urlSecret: Effect.Effect<string, StoreUnavailable>
}>()("animal-store/ports/PhotoRepository") {}
