import { DateTime, Duration, Effect, Layer, Option } from "effect"
import { type Migrator, SqlClient, type SqlError } from "effect/sql"
import { PhotoStore } from "../../../ports/photos/PhotoStore.ts"
import * as Migrations from "../Migrations.ts"
import type { Options } from "../pets/PetRepositorySql.ts"
import { unavailableOrDie } from "../UnavailableOrDie.ts"
import * as Spans from "../../observability/Spans.ts"

/**
 * Photos' bytes in the `photo_blobs` table of the store's own database (bytea), so that
 * the PostgreSQL and embedded stores need nothing more to keep photos, and a backup of
 * the database holds them.
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const guard = unavailableOrDie(Duration.fromInputUnsafe(options.timeout))
    return PhotoStore.of({
      // A key is written once: a second put of it (a retried write) keeps the first.
      put: Spans.method("PhotoStore.put", (key: string, bytes: Uint8Array) =>
        guard(Effect.asVoid(
          sql`INSERT INTO photo_blobs (key, bytes) VALUES (${key}, ${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)})
              ON CONFLICT (key) DO NOTHING`
        ))),
      get: Spans.method("PhotoStore.get", (key: string) =>
        guard(Effect.map(
          sql<{ bytes: Uint8Array }>`SELECT bytes FROM photo_blobs WHERE key = ${key}`,
          (rows) => Option.fromNullishOr(rows[0]?.bytes).pipe(Option.map((bytes) => new Uint8Array(bytes)))
        ))),
      delete: Spans.method("PhotoStore.delete", (keys: ReadonlyArray<string>) =>
        keys.length === 0 ? Effect.void : guard(Effect.asVoid(sql`DELETE FROM photo_blobs WHERE key IN ${sql.in(keys)}`))),
      olderThan: Spans.method("PhotoStore.olderThan", (before: DateTime.Utc, limit: number) =>
        guard(Effect.map(
          sql<{ key: string }>`SELECT key FROM photo_blobs WHERE written_at < ${new Date(DateTime.toEpochMillis(before))}
                               ORDER BY written_at LIMIT ${limit}`,
          (rows) => rows.map((row) => row.key)
        )))
    })
  })

/** A PhotoStore in the database of the SqlClient in context (PostgreSQL server or embedded PGlite). */
export const layer = (
  options: Options
): Layer.Layer<PhotoStore, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(PhotoStore, make(options)).pipe(Layer.provide(Migrations.layer))
