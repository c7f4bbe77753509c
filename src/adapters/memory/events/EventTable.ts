import { DateTime, Effect, Queue, Stream } from "effect"
import type { EventData } from "../../../domain/events/EventData.ts"
import { EventId } from "../../../domain/events/EventId.ts"
import type { EventType } from "../../../domain/events/EventType.ts"
import { LoggedEvent } from "../../../ports/events/LoggedEvent.ts"
import { IdOrdered } from "../IdOrdered.ts"

/**
 * The events of the in-memory store, in id order. The repositories append in the same
 * synchronous step as the change they record (the memory store's transaction), so an
 * event exists exactly when its change does, and ids follow the order of the changes.
 */
export class EventTable {
  readonly #all = new IdOrdered<LoggedEvent>()
  readonly #listeners = new Set<() => void>()
  readonly #heads = new Map<EventType, EventId>()
  readonly #sweptHeads = new Map<EventType, EventId>()
  #lastId = 0n
  #sweptThrough = 0n

  /**
   * Records one change: the one call every memory repository makes for each change,
   * inside the step that makes it (`data` from petData/orderData, `now` from the Clock,
   * `traceParent` from TraceParent.current).
   */
  append(type: EventType, data: EventData, now: DateTime.Utc, traceParent: string | undefined): LoggedEvent {
    this.#lastId += 1n
    const id = EventId.make(this.#lastId)
    const event = new LoggedEvent(
      traceParent === undefined
        ? { id, type, occurredAt: now, data }
        : { id, type, occurredAt: now, data, traceParent },
      { disableChecks: true }
    )
    this.#all.add(event)
    this.#heads.set(type, id)
    for (const listener of this.#listeners) listener()
    return event
  }

  /** Up to `limit` events after `after`, of `types` when given. */
  page(after: bigint, limit: number, types: ReadonlyArray<EventType> | undefined): Array<LoggedEvent> {
    if (types === undefined || types.length === 0) return this.#all.page(after, limit)
    const wanted = new Set(types)
    const found: Array<LoggedEvent> = []
    // Scans in batches from `after`, as the SQL adapter's `type = ANY` walks the primary key.
    for (let from = after; found.length < limit;) {
      const batch = this.#all.page(from, Math.max(limit, 100))
      for (const event of batch) if (wanted.has(event.type) && found.length < limit) found.push(event)
      if (batch.length === 0) break
      from = batch[batch.length - 1]!.id
    }
    return found
  }

  /** The id of the latest event (0 when none). */
  get lastId(): bigint {
    return this.#lastId
  }

  /** The id of the latest event of each type that has one. */
  get heads(): ReadonlyMap<EventType, EventId> {
    return this.#heads
  }

  /** The id of the latest event of each type that a sweep removed. */
  get sweptHeads(): ReadonlyMap<EventType, EventId> {
    return this.#sweptHeads
  }

  /** The highest id swept so far (0 when none). */
  get sweptThrough(): bigint {
    return this.#sweptThrough
  }

  /** Removes up to `limit` of the oldest events that occurred before `before`. */
  sweep(before: DateTime.Utc, limit: number): number {
    const oldest = this.#all.page(undefined, limit)
    let removed = 0
    for (const event of oldest) {
      if (!DateTime.isLessThan(event.occurredAt, before)) break
      this.#all.remove(event.id)
      this.#sweptThrough = event.id
      this.#sweptHeads.set(event.type, event.id)
      removed++
    }
    return removed
  }

  /** Signals each append, synchronously, while the stream runs. */
  readonly appended: Stream.Stream<void> = Stream.callback<void>((queue) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const listener = () => void Queue.offerUnsafe(queue, undefined)
        this.#listeners.add(listener)
        return listener
      }),
      (listener) => Effect.sync(() => this.#listeners.delete(listener))
    ), { bufferSize: 1, strategy: "sliding" })
}
