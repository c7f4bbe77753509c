import { Clock, DateTime, Duration, Effect, Layer } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import { EventLog } from "../../ports/events/EventLog.ts"
import { WebhookRepository } from "../../ports/webhooks/WebhookRepository.ts"

/** How events, and the webhook delivery attempts made of them, are kept. */
export interface Options {
  /** How long an event, and a delivery attempt, is kept after it occurred (EVENTS_RETENTION). */
  readonly retention: Duration.Input
  /** How often the sweep runs. Default: every minute. */
  readonly every?: Duration.Input | undefined
  /** Rows removed per statement, so that no statement holds locks or I/O for long. Default: 1,000. */
  readonly batch?: number | undefined
}

// Removes what `remove` finds before the cutoff (`retention` ago by the Clock), a bounded
// batch at a time until a batch comes back short; answers how many it removed.
const inBatches = (
  options: Options,
  remove: (query: { readonly before: DateTime.Utc; readonly limit: number }) => Effect.Effect<number, StoreUnavailable>
) =>
  Effect.gen(function*() {
    const batch = options.batch ?? 1000
    const before = DateTime.subtractDuration(
      DateTime.makeUnsafe(yield* Clock.currentTimeMillis),
      Duration.fromInputUnsafe(options.retention)
    )
    let removed = 0
    while (true) {
      const count = yield* remove({ before, limit: batch })
      removed += count
      if (count < batch) return removed
    }
  })

/**
 * One sweep: removes the events older than `retention` by the Clock, a bounded batch at
 * a time until a batch comes back short. Answers how many it removed.
 */
export const sweep = (options: Options) => Effect.flatMap(EventLog, (log) => inBatches(options, log.sweep))

/**
 * One pruning of the webhook delivery attempts (`GET /v1/webhooks/{id}/deliveries`): removes
 * those made longer than `retention` ago, the same cutoff as the events', a bounded batch
 * at a time until a batch comes back short. An attempt is made after its event occurred,
 * so it is kept at least as long as the event it delivered. The subscriptions and where
 * their deliveries stand are untouched. Answers how many it removed.
 */
export const pruneDeliveries = (options: Options) =>
  Effect.flatMap(WebhookRepository, (repository) => inBatches(options, repository.pruneDeliveries))

/**
 * Sweeps the events and prunes the delivery attempts periodically while the layer lives;
 * a step the store refuses is logged and tried again at the next period, and does not
 * keep the other from running.
 */
export const layer = (options: Options): Layer.Layer<never, never, EventLog | WebhookRepository> =>
  // Background upkeep records no trace: one a minute per instance, nearly always of nothing.
  Layer.effectDiscard(Effect.forkScoped(Effect.withTracerEnabled(false)(
    Effect.forever(Effect.andThen(
      Effect.sleep(options.every ?? Duration.minutes(1)),
      Effect.andThen(
        sweep(options).pipe(Effect.catchTag("StoreUnavailable", (error) => Effect.logWarning(`event retention: ${error.message}`))),
        pruneDeliveries(options).pipe(
          Effect.catchTag("StoreUnavailable", (error) => Effect.logWarning(`webhook delivery retention: ${error.message}`))
        )
      )
    ))
  )))
