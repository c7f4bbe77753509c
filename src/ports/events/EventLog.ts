import { Context, type DateTime, type Effect, type Stream } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { EventId } from "../../domain/events/EventId.ts"
import type { EventType } from "../../domain/events/EventType.ts"
import type { LoggedEvent } from "./LoggedEvent.ts"

/**
 * Where the log stands for each type: what a webhook dispatcher compares a subscription's
 * cursor with, so that it claims only the subscriptions with an event of their types to
 * deliver (`latest`), and sees the events of their types that retention removed before
 * they were delivered (`swept`).
 */
export interface TypeHeads {
  /** The id of the latest event of each type that has one, as EventLog.latest is for all. */
  readonly latest: ReadonlyMap<EventType, EventId>
  /** The id of the latest event of each type that retention has removed, as EventLog.sweptThrough is for all. */
  readonly swept: ReadonlyMap<EventType, EventId>
}

/**
 * The store's feed of committed changes, read in id order. The repositories append to
 * it inside their own transactions (an outbox); this port only reads it, so feed
 * readers, SSE streams and webhook deliveries all see the same order.
 *
 * Ids are visible in commit order: once a reader has seen event n, no event with an id
 * below n commits later, so `page({ after: n })` never skips one.
 */
export class EventLog extends Context.Service<EventLog, {
  /** Up to `limit` events with id greater than `after`, of `types` when given, ascending by id. */
  readonly page: (query: {
    readonly after: EventId | 0n
    readonly limit: number
    readonly types?: ReadonlyArray<EventType> | undefined
  }) => Effect.Effect<ReadonlyArray<LoggedEvent>, StoreUnavailable>
  /** The id of the latest event (0 when none): no event below it can still appear. */
  readonly latest: Effect.Effect<EventId | 0n, StoreUnavailable>
  /** Where the log stands for each type (see {@link TypeHeads}). */
  readonly heads: Effect.Effect<TypeHeads, StoreUnavailable>
  /**
   * The highest id retention has removed (0 when none): a reader whose `after` is below
   * it has missed events for good.
   */
  readonly sweptThrough: Effect.Effect<EventId | 0n, StoreUnavailable>
  /**
   * Removes up to `limit` of the oldest events that occurred before `before`, and
   * answers how many it removed: one bounded statement, to be repeated while it removes
   * a full batch.
   */
  readonly sweep: (query: {
    readonly before: DateTime.Utc
    readonly limit: number
  }) => Effect.Effect<number, StoreUnavailable>
  /**
   * A signal that events may have been appended (by this process, or by another one on
   * the same database where the adapter can hear it). Readers page on from where they
   * are; a reader that must not depend on it also polls.
   */
  readonly appended: Stream.Stream<void>
}>()("animal-store/ports/EventLog") {}
