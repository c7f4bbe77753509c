import { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { type EventData, eventDataText } from "../../../domain/events/EventData.ts"
import type { EventType } from "../../../domain/events/EventType.ts"

// The two-int4 form of advisory locks has a key space of its own: no hashtextextended
// lock (IdempotentCreatesSql) can collide with it. 0x6576 is "ev".
const EVENTS_LOCK_CLASS = 0x6576
const EVENTS_LOCK_ID = 1

/** The channel every append notifies on commit (EventLogSql listens with `listen`). */
export const EVENTS_CHANNEL = "animal_store_events"

/**
 * Records one change in the outbox: the one statement every SQL repository runs for each
 * change, inside the change's transaction, as its LAST write (so it holds the lock for as
 * short a time as possible, and takes no other lock after it).
 *
 * The statement first takes a transaction-scoped advisory lock that every append shares,
 * then draws the id. The lock is released only after the transaction's commit is
 * visible, so ids are drawn and become visible in the same order: a reader that has seen
 * event n never meets an event below n that commits later. Appends of concurrent
 * transactions wait for each other from the append to the commit; the rest of their
 * work (row locks, checks, writes) still runs concurrently.
 */
export const appendEvent = (
  sql: SqlClient.SqlClient,
  type: EventType,
  data: EventData
): Effect.Effect<void, SqlError.SqlError> =>
  Effect.asVoid(sql`
    WITH serial AS (
      SELECT pg_advisory_xact_lock(${EVENTS_LOCK_CLASS}::int4, ${EVENTS_LOCK_ID}::int4), pg_notify(${EVENTS_CHANNEL}, '')
    )
    INSERT INTO events (type, data) SELECT ${type}, ${eventDataText(data)}::json FROM serial`)
