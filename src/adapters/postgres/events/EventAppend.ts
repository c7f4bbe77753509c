import { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { type EventData, eventDataText } from "../../../domain/events/EventData.ts"
import type { EventType } from "../../../domain/events/EventType.ts"
import * as TraceParent from "../../observability/TraceParent.ts"

/**
 * `statement`, an append given the `traceparent` to record with its event (TraceParent.current;
 * null when there is none). Every statement that writes to `events` is built through it.
 */
export const recording = <A, E, R>(statement: (traceParent: string | null) => Effect.Effect<A, E, R>) =>
  Effect.withFiber((fiber) => statement(TraceParent.current(fiber) ?? null))

/**
 * Records one change in the outbox, as a statement of its own inside the change's
 * transaction. Where the event's data can be written by the database, the repositories
 * write it in the change's own statement instead (a round trip fewer): pet creates and
 * order actions.
 *
 * The row goes to `events_pending`, a table without indexes, until EventSequencer moves
 * it into `events` with its number, after the transaction commits (the repository wakes
 * the sequencer then): the writer takes no lock shared with other writers and sends no
 * NOTIFY, so changes commit concurrently.
 * EventSequencer says why ids still become visible in order.
 */
export const appendEvent = (
  sql: SqlClient.SqlClient,
  type: EventType,
  data: EventData
): Effect.Effect<void, SqlError.SqlError> =>
  recording((traceParent) =>
    Effect.asVoid(sql`
      INSERT INTO events_pending (type, data, trace_parent)
      VALUES (${type}, ${eventDataText(data)}::json, ${traceParent})`)
  )
