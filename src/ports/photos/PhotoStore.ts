import { Context, type DateTime, type Duration, type Effect, type Option } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"

/**
 * Where photos' bytes are kept, by key (Rendition.blobKey). A key is written once and
 * never changed. The bytes are written before their record (PhotoRepository), so a crash
 * between the two leaves bytes without a record, never the reverse; `olderThan` lets a
 * sweep find those and delete them.
 */
export class PhotoStore extends Context.Service<PhotoStore, {
  readonly put: (key: string, bytes: Uint8Array) => Effect.Effect<void, StoreUnavailable>
  /** The bytes under `key`, none when there are none. */
  readonly get: (key: string) => Effect.Effect<Option.Option<Uint8Array>, StoreUnavailable>
  /** Deletes the bytes of each of `keys` that has some. */
  readonly delete: (keys: ReadonlyArray<string>) => Effect.Effect<void, StoreUnavailable>
  /** Up to `limit` keys written before `before`, oldest first. */
  readonly olderThan: (before: DateTime.Utc, limit: number) => Effect.Effect<ReadonlyArray<string>, StoreUnavailable>
  /**
   * A store that can serve bytes itself (an object store's presigned URLs) gives the
   * address where `key` can be read for `ttl`; the service then answers a redirect instead
   * of the bytes. The memory and SQL stores have none.
   */
  readonly redirectUrl?: ((key: string, ttl: Duration.Duration) => Effect.Effect<string, StoreUnavailable>) | undefined
}>()("animal-store/ports/PhotoStore") {}
