import { DateTime, Duration, Effect, Layer, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { type Migrator, SqlClient, type SqlError } from "effect/sql"
import { PetNotFound } from "../../../domain/Errors.ts"
import { photoData } from "../../../domain/events/EventData.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import { ImageType } from "../../../domain/photos/ImageType.ts"
import { MAX_PHOTOS_PER_PET, type NewPhoto, Photo, StorageKey } from "../../../domain/photos/Photo.ts"
import { PhotoNotFound, TooManyPhotos } from "../../../domain/photos/PhotoErrors.ts"
import { PhotoId } from "../../../domain/photos/PhotoId.ts"
import { RenditionFile } from "../../../domain/photos/Rendition.ts"
import { PhotoRepository } from "../../../ports/photos/PhotoRepository.ts"
import { appendEvent } from "../events/EventAppend.ts"
import { EventSequencer } from "../events/EventSequencer.ts"
import * as Migrations from "../Migrations.ts"
import type { Options } from "../pets/PetRepositorySql.ts"
import { unavailableOrDie } from "../UnavailableOrDie.ts"
import * as Spans from "../../observability/Spans.ts"

const COLUMNS = "id, pet_id, content_type, width, height, bytes, storage_key, renditions, created_at"

// Rows are decoded through the domain schemas, so a row no service could have written fails loudly.
const PhotoRow = Schema.Struct({
  id: PhotoId,
  pet_id: PetId,
  content_type: ImageType,
  width: Schema.Int,
  height: Schema.Int,
  bytes: Schema.Int,
  storage_key: StorageKey,
  renditions: Schema.Struct({ original: RenditionFile, thumb: RenditionFile, medium: RenditionFile }),
  created_at: Schema.DateTimeUtcFromDate
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(PhotoRow))
const toPhoto = (row: typeof PhotoRow.Type): Photo =>
  new Photo({
    id: row.id,
    petId: row.pet_id,
    contentType: row.content_type,
    width: row.width,
    height: row.height,
    bytes: row.bytes,
    storageKey: row.storage_key,
    renditions: row.renditions,
    createdAt: row.created_at
  }, { disableChecks: true })
const photos = (rows: ReadonlyArray<unknown>) => Effect.map(decodeRows(rows), (decoded) => decoded.map(toPhoto))

/** Builds a PhotoRepository on any PostgreSQL-speaking SqlClient, once the migrations have run. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sequencer = yield* EventSequencer
    const guard = unavailableOrDie(Duration.fromInputUnsafe(options.timeout))

    // The pet row is locked for the count and the insert: concurrent adds for one pet
    // take turns, so the limit holds; a retirement (which locks it too) waits or is seen.
    const add = Spans.method("PhotoRepository.add", (photo: NewPhoto) =>
      sql.withTransaction(Effect.gen(function*() {
        const pet = yield* sql`SELECT id FROM pets WHERE id = ${photo.petId} AND deleted_at IS NULL FOR UPDATE`
        if (pet.length === 0) return yield* new PetNotFound({ id: photo.petId })
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM photos WHERE pet_id = ${photo.petId}`
        if (counted!.count >= MAX_PHOTOS_PER_PET) return yield* new TooManyPhotos({ petId: photo.petId, limit: MAX_PHOTOS_PER_PET })
        const [added] = yield* photos(yield* sql`
          INSERT INTO photos (pet_id, content_type, width, height, bytes, storage_key, renditions, created_at)
          VALUES (${photo.petId}, ${photo.contentType}, ${photo.width}, ${photo.height}, ${photo.bytes},
                  ${photo.storageKey}, ${JSON.stringify(photo.renditions)}::jsonb, ${DateTime.toDateUtc(photo.createdAt)})
          RETURNING ${sql.literal(COLUMNS)}`)
        yield* appendEvent(sql, "pet.photo_added", photoData(added!))
        return added!
      })).pipe(Effect.tap(() => sequencer.wake), guard))

    const list = Spans.method("PhotoRepository.list", (petId: PetId) =>
      Effect.gen(function*() {
        const found = yield* photos(
          yield* sql`SELECT ${sql.literal(COLUMNS)} FROM photos WHERE pet_id = ${petId} ORDER BY id`
        )
        if (found.length > 0) return found
        // A retired pet is known here only by its photos (see the port).
        const pet = yield* sql`SELECT 1 FROM pets WHERE id = ${petId} AND deleted_at IS NULL`
        return pet.length === 0 ? yield* new PetNotFound({ id: petId }) : found
      }).pipe(guard))

    const get = Spans.method("PhotoRepository.get", (petId: PetId, id: PhotoId) =>
      Effect.gen(function*() {
        const [photo] = yield* photos(
          yield* sql`SELECT ${sql.literal(COLUMNS)} FROM photos WHERE id = ${id} AND pet_id = ${petId}`
        )
        return photo ?? (yield* new PhotoNotFound({ petId, id }))
      }).pipe(guard))

    const remove = Spans.method("PhotoRepository.remove", (petId: PetId, id: PhotoId) =>
      sql.withTransaction(Effect.gen(function*() {
        const [photo] = yield* photos(
          yield* sql`DELETE FROM photos WHERE id = ${id} AND pet_id = ${petId} RETURNING ${sql.literal(COLUMNS)}`
        )
        if (photo === undefined) return yield* new PhotoNotFound({ petId, id })
        yield* appendEvent(sql, "pet.photo_removed", photoData(photo))
        return photo
      })).pipe(Effect.tap(() => sequencer.wake), guard))

    const referenced = Spans.method("PhotoRepository.referenced", (storageKeys: ReadonlyArray<string>) =>
      (storageKeys.length === 0
        ? Effect.succeed(new Set<string>())
        : Effect.map(
          sql<{ storage_key: string }>`SELECT storage_key FROM photos WHERE storage_key IN ${sql.in(storageKeys)}`,
          (rows) => new Set(rows.map((row) => row.storage_key))
        )).pipe(guard))

    // The first instance to ask makes it; the others, then and later, read the same row.
    const urlSecret = Effect.gen(function*() {
      yield* sql`INSERT INTO photo_url_secret (secret) VALUES (${randomBytes(32).toString("base64url")})
                 ON CONFLICT DO NOTHING`
      const [row] = yield* sql<{ secret: string }>`SELECT secret FROM photo_url_secret`
      return row!.secret
    }).pipe(guard, Spans.span("PhotoRepository.urlSecret"))

    return PhotoRepository.of({ add, list, get, remove, referenced, urlSecret })
  })

/** A PhotoRepository on the SqlClient in context (PostgreSQL server or embedded PGlite). */
export const layer = (
  options: Options
): Layer.Layer<PhotoRepository, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(PhotoRepository, make(options)).pipe(Layer.provide(Layer.merge(Migrations.layer, EventSequencer.layer)))
