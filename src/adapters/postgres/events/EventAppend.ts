import { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { type EventData, eventDataText } from "../../../domain/events/EventData.ts"
import type { EventType } from "../../../domain/events/EventType.ts"
import * as TraceParent from "../../observability/TraceParent.ts"

/** The channel every append notifies on commit (EventLogSql listens with `listen`). */
export const EVENTS_CHANNEL = "animal_store_events"

/**
 * `statement`, an append given the `traceparent` to record with its event (TraceParent.current;
 * null when there is none). Every statement that writes to `events` is built through it.
 */
export const recording = <A, E, R>(statement: (traceParent: string | null) => Effect.Effect<A, E, R>) =>
  Effect.withFiber((fiber) => statement(TraceParent.current(fiber) ?? null))

/**
 * Records one change in the outbox: the one statement every SQL repository runs for each
 * change, inside the change's transaction (as its last write, by convention).
 *
 * The row gets its id only inside the transaction's COMMIT (migration 0010's deferred
 * trigger, under a lock every commit of an event shares), so ids are drawn and become
 * visible in the same order, across connections and instances, and the lock is never
 * held across a round trip to this process. Its NOTIFY is delivered when the transaction
 * commits, and never for one that rolls back.
 */
export const appendEvent = (
  sql: SqlClient.SqlClient,
  type: EventType,
  data: EventData
): Effect.Effect<void, SqlError.SqlError> =>
  recording((traceParent) =>
    Effect.asVoid(sql`
      INSERT INTO events (type, data, trace_parent)
      SELECT ${type}, ${eventDataText(data)}::json, ${traceParent} FROM pg_notify(${EVENTS_CHANNEL}, '')`)
  )
