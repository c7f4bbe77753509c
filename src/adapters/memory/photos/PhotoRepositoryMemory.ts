import { Clock, DateTime, Effect, type Fiber, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { PetNotFound } from "../../../domain/Errors.ts"
import { photoData } from "../../../domain/events/EventData.ts"
import type { EventType } from "../../../domain/events/EventType.ts"
import type { PetId } from "../../../domain/pets/PetId.ts"
import { MAX_PHOTOS_PER_PET, type NewPhoto, Photo } from "../../../domain/photos/Photo.ts"
import { PhotoNotFound, TooManyPhotos } from "../../../domain/photos/PhotoErrors.ts"
import { PhotoId } from "../../../domain/photos/PhotoId.ts"
import { PhotoRepository } from "../../../ports/photos/PhotoRepository.ts"
import { EventTable } from "../events/EventTable.ts"
import { PetTable } from "../pets/PetTable.ts"
import * as Spans from "../../observability/Spans.ts"
import * as TraceParent from "../../observability/TraceParent.ts"

/**
 * A PhotoRepository over the pets of `pets` (whose live pets may get photos), recording
 * each change in `events`. Each method body runs synchronously inside one Effect step, so
 * the limit's count and the insert, and each change and its event, are one step.
 */
export const fromTables = (pets: PetTable, events: EventTable): PhotoRepository["Service"] => {
  // Each pet's photos in upload order (ids only grow, so appending keeps the order).
  const byPet = new Map<PetId, Array<Photo>>()
  let lastId = 0n
  // The memory store is one process's: its secret lives and dies with it.
  const urlSecret = randomBytes(32).toString("base64url")
  const record = (fiber: Fiber.Fiber<unknown, unknown>, type: EventType, photo: Photo) =>
    events.append(
      type,
      photoData(photo),
      DateTime.makeUnsafe(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()),
      TraceParent.current(fiber)
    )

  return PhotoRepository.of({
    add: Spans.method("PhotoRepository.add", (input: NewPhoto) =>
      Effect.withFiber<Photo, PetNotFound | TooManyPhotos>((fiber) => {
        if (pets.get(input.petId) === undefined) return Effect.fail(new PetNotFound({ id: input.petId }))
        const photos = byPet.get(input.petId) ?? []
        if (photos.length >= MAX_PHOTOS_PER_PET) {
          return Effect.fail(new TooManyPhotos({ petId: input.petId, limit: MAX_PHOTOS_PER_PET }))
        }
        const photo = new Photo({ ...input, id: PhotoId.make(++lastId) }, { disableChecks: true })
        photos.push(photo)
        byPet.set(input.petId, photos)
        record(fiber, "pet.photo_added", photo)
        return Effect.succeed(photo)
      })),
    list: Spans.method("PhotoRepository.list", (petId: PetId) =>
      Effect.suspend(() => {
        const photos = byPet.get(petId)
        // A retired pet is known here only by its photos (see the port).
        if (photos === undefined && pets.get(petId) === undefined) return Effect.fail(new PetNotFound({ id: petId }))
        return Effect.succeed(photos === undefined ? [] : [...photos])
      })),
    get: Spans.method("PhotoRepository.get", (petId: PetId, id: PhotoId) =>
      Effect.suspend(() => {
        const photo = byPet.get(petId)?.find((photo) => photo.id === id)
        return photo === undefined ? Effect.fail(new PhotoNotFound({ petId, id })) : Effect.succeed(photo)
      })),
    remove: Spans.method("PhotoRepository.remove", (petId: PetId, id: PhotoId) =>
      Effect.withFiber<Photo, PhotoNotFound>((fiber) => {
        const photos = byPet.get(petId) ?? []
        const index = photos.findIndex((photo) => photo.id === id)
        if (index === -1) return Effect.fail(new PhotoNotFound({ petId, id }))
        const [photo] = photos.splice(index, 1)
        if (photos.length === 0) byPet.delete(petId)
        record(fiber, "pet.photo_removed", photo!)
        return Effect.succeed(photo!)
      })),
    referenced: Spans.method("PhotoRepository.referenced", (storageKeys: ReadonlyArray<string>) =>
      Effect.sync(() => {
        const wanted = new Set(storageKeys)
        const found = new Set<string>()
        for (const photos of byPet.values()) {
          for (const photo of photos) if (wanted.has(photo.storageKey)) found.add(photo.storageKey)
        }
        return found
      })),
    urlSecret: Effect.succeed(urlSecret)
  })
}

/** A PhotoRepository with a store of its own (no pets but those `pets` holds). */
export const make: Effect.Effect<PhotoRepository["Service"]> = Effect.sync(() => fromTables(new PetTable(), new EventTable()))

/** A PhotoRepository of its own, in memory, over an empty catalogue. */
export const layer: Layer.Layer<PhotoRepository> = Layer.effect(PhotoRepository, make)
