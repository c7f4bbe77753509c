import { DateTime, Duration, Effect, Layer, Schedule } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import { storageKeyOf } from "../../domain/photos/Rendition.ts"
import { PhotoRepository } from "../../ports/photos/PhotoRepository.ts"
import { PhotoStore } from "../../ports/photos/PhotoStore.ts"

/** How often the sweep runs, and how old bytes without a record must be before it deletes them. */
export interface Options {
  readonly every: Duration.Duration
  /**
   * Longer than any upload takes between writing its bytes and its record: bytes
   * younger than this may be an upload under way, whose record is still to come.
   */
  readonly grace: Duration.Duration
}

/** Every 10 minutes, bytes older than an hour. */
export const DEFAULTS: Options = { every: Duration.minutes(10), grace: Duration.hours(1) }

// One batch: as many keys as one statement of each store handles well.
const BATCH = 500

/**
 * Deletes the bytes that no record names and that were written before `before`, a batch
 * at a time, and answers how many it deleted. The keys a record names are kept, however
 * old: the store lists the old keys, the repository says which it holds.
 */
export const sweep = (before: DateTime.Utc): Effect.Effect<number, StoreUnavailable, PhotoRepository | PhotoStore> =>
  Effect.gen(function*() {
    const repository = yield* PhotoRepository
    const store = yield* PhotoStore
    let deleted = 0
    // Pages by time: the kept keys stay in the list, so the next page starts after them.
    let seen = new Set<string>()
    for (;;) {
      const keys = (yield* store.olderThan(before, BATCH + seen.size)).filter((key) => !seen.has(key))
      if (keys.length === 0) return deleted
      const referenced = yield* repository.referenced([...new Set(keys.map(storageKeyOf))])
      const orphans = keys.filter((key) => !referenced.has(storageKeyOf(key)))
      yield* store.delete(orphans)
      deleted += orphans.length
      seen = new Set([...seen, ...keys.filter((key) => referenced.has(storageKeyOf(key)))])
      if (keys.length < BATCH) return deleted
    }
  })

/** Sweeps orphan bytes every `every` while the layer lives; a failed pass waits for the next. */
export const layer = (options: Options = DEFAULTS): Layer.Layer<never, never, PhotoRepository | PhotoStore> =>
  Layer.effectDiscard(Effect.forkScoped(
    Effect.flatMap(DateTime.now, (now) => sweep(DateTime.subtractDuration(now, options.grace))).pipe(
      Effect.tap((deleted) => deleted > 0 ? Effect.logInfo("Swept photo bytes without a record", { deleted }) : Effect.void),
      Effect.ignore({ log: "Warn", message: "The photo orphan sweep failed; it runs again later" }),
      Effect.repeat(Schedule.spaced(options.every)),
      // A periodic pass that nearly always finds nothing: no trace.
      Effect.withTracerEnabled(false)
    )
  ))
