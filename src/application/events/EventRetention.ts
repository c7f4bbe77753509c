import { Clock, DateTime, Duration, Effect, Layer } from "effect"
import { EventLog } from "../../ports/events/EventLog.ts"

/** How events are kept. */
export interface Options {
  /** How long an event is kept after it occurred (EVENTS_RETENTION). */
  readonly retention: Duration.Input
  /** How often the sweep runs. Default: every minute. */
  readonly every?: Duration.Input | undefined
  /** Events removed per statement, so that no statement holds locks or I/O for long. Default: 1,000. */
  readonly batch?: number | undefined
}

/**
 * One sweep: removes the events older than `retention` by the Clock, a bounded batch at
 * a time until a batch comes back short. Answers how many it removed.
 */
export const sweep = (options: Options) =>
  Effect.gen(function*() {
    const log = yield* EventLog
    const batch = options.batch ?? 1000
    const before = DateTime.subtractDuration(
      DateTime.makeUnsafe(yield* Clock.currentTimeMillis),
      Duration.fromInputUnsafe(options.retention)
    )
    let removed = 0
    while (true) {
      const count = yield* log.sweep({ before, limit: batch })
      removed += count
      if (count < batch) return removed
    }
  })

/** Sweeps periodically while the layer lives; a sweep the store refuses is tried again at the next period. */
export const layer = (options: Options): Layer.Layer<never, never, EventLog> =>
  Layer.effectDiscard(Effect.forkScoped(
    Effect.forever(Effect.andThen(
      Effect.sleep(options.every ?? Duration.minutes(1)),
      sweep(options).pipe(Effect.catchTag("StoreUnavailable", (error) => Effect.logWarning(`event retention: ${error.message}`)))
    ))
  ))
