import { Context, type Effect } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { EventId } from "../../domain/events/EventId.ts"
import type { EventType } from "../../domain/events/EventType.ts"
import type { StoreEvent } from "../../domain/events/StoreEvent.ts"

/**
 * The store's feed of committed changes, read in id order. The repositories append to
 * it inside their own transactions (an outbox); this port only reads it, so feed
 * readers, SSE streams and webhook deliveries all see the same order.
 */
export class EventLog extends Context.Service<EventLog, {
  /** Up to `limit` events with id greater than `after`, of `types` when given, ascending by id. */
  readonly page: (query: {
    readonly after: EventId | 0n
    readonly limit: number
    readonly types?: ReadonlyArray<EventType> | undefined
  }) => Effect.Effect<ReadonlyArray<StoreEvent>, StoreUnavailable>
}>()("animal-store/ports/EventLog") {}
