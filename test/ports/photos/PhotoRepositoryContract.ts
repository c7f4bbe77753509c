/** The one contract of PhotoRepository, run on every store (memory, embedded, PostgreSQL). */
import { assert, layer } from "@effect/vitest"
import { DateTime, Effect, Exit, type Layer, Schedule } from "effect"
import { photoData } from "../../../src/domain/events/EventData.ts"
import type { EventId } from "../../../src/domain/events/EventId.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { MAX_PHOTOS_PER_PET, NewPhoto } from "../../../src/domain/photos/Photo.ts"
import { PhotoNotFound, TooManyPhotos } from "../../../src/domain/photos/PhotoErrors.ts"
import { PhotoId } from "../../../src/domain/photos/PhotoId.ts"
import { EventLog } from "../../../src/ports/events/EventLog.ts"
import type { LoggedEvent } from "../../../src/ports/events/LoggedEvent.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import { PhotoRepository } from "../../../src/ports/photos/PhotoRepository.ts"
import { PetNotFound } from "../../../src/domain/Errors.ts"

const T0 = DateTime.makeUnsafe("2026-05-01T10:00:00.123Z")
const HASH = "a".repeat(43)
let keys = 0
const newPhoto = (petId: PetId, overrides?: Partial<{ width: number; contentType: "image/png" }>) =>
  new NewPhoto({
    petId,
    contentType: overrides?.contentType ?? "image/jpeg",
    width: overrides?.width ?? 640,
    height: 480,
    bytes: 12_345,
    storageKey: `contract-key-${Date.now().toString(36)}-${++keys}`,
    renditions: {
      original: { contentType: overrides?.contentType ?? "image/jpeg", bytes: 12_345, hash: HASH },
      thumb: { contentType: "image/webp", bytes: 1_000, hash: "b".repeat(43) },
      medium: { contentType: "image/webp", bytes: 5_000, hash: "c".repeat(43) }
    },
    createdAt: T0
  })
const newPet = Effect.flatMap(PetRepository, (pets) =>
  pets.create(new NewPet({ name: PetName.make("Photogenic"), categoryId: CategoryId.make(1n), status: "available" })))
const missingPet = PetId.make(9_000_000_000_000n)

// Every event after `after`: the SQL stores number an event just after its change commits.
const eventsAfter = (after: EventId | 0n, count: number) =>
  Effect.flatMap(EventLog, (log) =>
    log.page({ after, limit: 1000, types: ["pet.photo_added", "pet.photo_removed"] }).pipe(
      Effect.flatMap((events) => events.length >= count ? Effect.succeed(events) : Effect.fail("not yet" as const)),
      Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 250 })
    ))
const latest = Effect.flatMap(EventLog, (log) => log.latest)
const dataOf = (events: ReadonlyArray<LoggedEvent>) => events.map((event) => [event.type, event.data])

/** Runs the contract against `store`; its pets and photos must start empty. */
export const photoRepositoryContract = (
  name: string,
  store: Layer.Layer<PhotoRepository | PetRepository | EventLog, unknown>,
  options?: { readonly timeout?: number }
) =>
  layer(store, { timeout: options?.timeout ?? 60_000, excludeTestServices: true })(
    `PhotoRepository contract: ${name}`,
    (it) => {
      it.effect("an added photo round-trips and is listed in upload order, each add with its event", () =>
        Effect.gen(function*() {
          const photos = yield* PhotoRepository
          const pet = yield* newPet
          assert.deepStrictEqual(yield* photos.list(pet.id), [])
          const after = yield* latest
          const first = yield* photos.add(newPhoto(pet.id, { contentType: "image/png" }))
          const second = yield* photos.add(newPhoto(pet.id, { width: 800 }))
          assert.isTrue(second.id > first.id)
          assert.strictEqual(first.petId, pet.id)
          assert.strictEqual(first.contentType, "image/png")
          assert.strictEqual(second.width, 800)
          assert.deepStrictEqual(first.renditions.thumb, { contentType: "image/webp", bytes: 1_000, hash: "b".repeat(43) })
          assert.isTrue(DateTime.Equivalence(first.createdAt, T0))
          assert.deepStrictEqual(yield* photos.get(pet.id, second.id), second)
          assert.deepStrictEqual(yield* photos.list(pet.id), [first, second])
          assert.deepStrictEqual(dataOf(yield* eventsAfter(after, 2)), [
            ["pet.photo_added", photoData(first)],
            ["pet.photo_added", photoData(second)]
          ])
        }))

      it.effect("a photo is read only under its own pet", () =>
        Effect.gen(function*() {
          const photos = yield* PhotoRepository
          const [mine, other] = [yield* newPet, yield* newPet]
          const photo = yield* photos.add(newPhoto(mine.id))
          assert.deepStrictEqual(
            yield* Effect.flip(photos.get(other.id, photo.id)),
            new PhotoNotFound({ petId: other.id, id: photo.id })
          )
          assert.deepStrictEqual(
            yield* Effect.flip(photos.remove(other.id, photo.id)),
            new PhotoNotFound({ petId: other.id, id: photo.id })
          )
          assert.deepStrictEqual(yield* photos.list(other.id), [])
          assert.deepStrictEqual(yield* photos.get(mine.id, photo.id), photo)
        }))

      it.effect("a pet that does not exist gets no photo and has none to list", () =>
        Effect.gen(function*() {
          const photos = yield* PhotoRepository
          assert.deepStrictEqual(yield* Effect.flip(photos.add(newPhoto(missingPet))), new PetNotFound({ id: missingPet }))
          assert.deepStrictEqual(yield* Effect.flip(photos.list(missingPet)), new PetNotFound({ id: missingPet }))
        }))

      it.effect(`concurrent adds never pass ${MAX_PHOTOS_PER_PET} photos per pet; a removal makes room`, () =>
        Effect.gen(function*() {
          const photos = yield* PhotoRepository
          const pet = yield* newPet
          const exits = yield* Effect.forEach(
            Array.from({ length: MAX_PHOTOS_PER_PET + 5 }, () => photos.add(newPhoto(pet.id))),
            Effect.exit,
            { concurrency: "unbounded" }
          )
          assert.strictEqual(exits.filter(Exit.isSuccess).length, MAX_PHOTOS_PER_PET)
          for (const exit of exits.filter(Exit.isFailure)) {
            assert.deepStrictEqual(exit as Exit.Exit<unknown, unknown>, Exit.fail(new TooManyPhotos({ petId: pet.id, limit: MAX_PHOTOS_PER_PET })))
          }
          const listed = yield* photos.list(pet.id)
          assert.strictEqual(listed.length, MAX_PHOTOS_PER_PET)
          assert.isTrue(listed.every((photo, i) => i === 0 || listed[i - 1]!.id < photo.id))
          yield* photos.remove(pet.id, listed[3]!.id)
          const added = yield* photos.add(newPhoto(pet.id))
          assert.strictEqual((yield* photos.list(pet.id)).at(-1)!.id, added.id)
          // Another pet's limit is its own.
          yield* photos.add(newPhoto((yield* newPet).id))
        }))

      it.effect("a removal answers the record, records its event, and leaves no trace of it", () =>
        Effect.gen(function*() {
          const photos = yield* PhotoRepository
          const pet = yield* newPet
          const kept = yield* photos.add(newPhoto(pet.id))
          const gone = yield* photos.add(newPhoto(pet.id))
          const after = yield* latest
          assert.deepStrictEqual(yield* photos.remove(pet.id, gone.id), gone)
          assert.deepStrictEqual(dataOf(yield* eventsAfter(after, 1)), [["pet.photo_removed", photoData(gone)]])
          assert.deepStrictEqual(yield* Effect.flip(photos.get(pet.id, gone.id)), new PhotoNotFound({ petId: pet.id, id: gone.id }))
          assert.deepStrictEqual(yield* Effect.flip(photos.remove(pet.id, gone.id)), new PhotoNotFound({ petId: pet.id, id: gone.id }))
          assert.deepStrictEqual(yield* photos.list(pet.id), [kept])
          assert.deepStrictEqual(
            yield* photos.referenced([kept.storageKey, gone.storageKey, "never-written-key-0000"]),
            new Set([kept.storageKey])
          )
          assert.deepStrictEqual(yield* photos.referenced([]), new Set())
        }))

      it.effect("a retired pet keeps its photos (listed, read, removable) and gets no new one", () =>
        Effect.gen(function*() {
          const pets = yield* PetRepository
          const photos = yield* PhotoRepository
          const pet = yield* newPet
          const [first, second] = [yield* photos.add(newPhoto(pet.id)), yield* photos.add(newPhoto(pet.id))]
          const bare = yield* newPet
          yield* pets.delete(pet.id, {})
          yield* pets.delete(bare.id, {})
          assert.deepStrictEqual(yield* photos.list(pet.id), [first, second])
          assert.deepStrictEqual(yield* photos.get(pet.id, second.id), second)
          assert.deepStrictEqual(yield* Effect.flip(photos.add(newPhoto(pet.id))), new PetNotFound({ id: pet.id }))
          yield* photos.remove(pet.id, first.id)
          assert.deepStrictEqual(yield* photos.list(pet.id), [second])
          // Without photos, a retired pet is not known here.
          assert.deepStrictEqual(yield* Effect.flip(photos.list(bare.id)), new PetNotFound({ id: bare.id }))
          assert.deepStrictEqual(
            yield* Effect.flip(photos.get(pet.id, PhotoId.make(first.id))),
            new PhotoNotFound({ petId: pet.id, id: first.id })
          )
        }))

      it.effect("the URL secret is made once and is the same at every ask", () =>
        Effect.gen(function*() {
          const photos = yield* PhotoRepository
          const secrets = yield* Effect.all([photos.urlSecret, photos.urlSecret, photos.urlSecret], { concurrency: "unbounded" })
          assert.isAtLeast(secrets[0].length, 32)
          assert.deepStrictEqual(secrets, [secrets[0], secrets[0], secrets[0]])
          assert.strictEqual(yield* photos.urlSecret, secrets[0])
        }))
    }
  )
