import type { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Schema } from "effect"
import { type Migrator, SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { parseEventData } from "../../../domain/events/EventData.ts"
import { EventId } from "../../../domain/events/EventId.ts"
import type { EventType } from "../../../domain/events/EventType.ts"
import { EventType as EventTypeSchema } from "../../../domain/events/EventType.ts"
import { EventLog } from "../../../ports/events/EventLog.ts"
import { LoggedEvent } from "../../../ports/events/LoggedEvent.ts"
import { EVENTS_CHANNEL, EventSequencer } from "./EventSequencer.ts"
import * as Migrations from "../Migrations.ts"
import { PgNotifications } from "../PgNotifications.ts"
import { unavailableOrDie } from "../UnavailableOrDie.ts"
import * as Spans from "../../observability/Spans.ts"

/** Tuning for the SQL-backed event log. */
export interface Options {
  /** Longest a single call may take before it fails with StoreUnavailable. */
  readonly timeout: Duration.Input
  /**
   * Signal `appended` whenever a sequencer, this instance's or another's, has numbered
   * events, through LISTEN on {@link EVENTS_CHANNEL} on the instance's one notification
   * connection (PgNotifications; a PostgreSQL server). Off for PGlite: its one connection
   * cannot be given to a listener; readers poll.
   */
  readonly listen?: boolean | undefined
}

// Rows are decoded through the domain schemas, so a row no service could have written fails loudly.
const EventRow = Schema.Struct({
  id: EventId,
  type: EventTypeSchema,
  occurred_at: Schema.DateTimeUtcFromDate,
  data: Schema.String,
  trace_parent: Schema.NullOr(Schema.String)
})

const toEvent = (row: typeof EventRow.Type): LoggedEvent => {
  const event = { id: row.id, type: row.type, occurredAt: row.occurred_at, data: parseEventData(row.data) }
  return new LoggedEvent(row.trace_parent === null ? event : { ...event, traceParent: row.trace_parent }, {
    disableChecks: true
  })
}

/**
 * The feed page query. Exported so a test can EXPLAIN it: `id > after ORDER BY id LIMIT n`
 * walks the primary key, and with one type `(type, id)`.
 */
export const pageStatement = (
  sql: SqlClient.SqlClient,
  page: { readonly after: bigint; readonly limit: number; readonly types: ReadonlyArray<EventType> }
) =>
  page.types.length === 0
    ? sql`SELECT id, type, occurred_at, data::text AS data, trace_parent FROM events
          WHERE id > ${page.after} ORDER BY id LIMIT ${page.limit}`
    : sql`SELECT id, type, occurred_at, data::text AS data, trace_parent FROM events
          WHERE ${sql.in("type", page.types)} AND id > ${page.after} ORDER BY id LIMIT ${page.limit}`

/**
 * Builds an EventLog on any PostgreSQL-speaking SqlClient, once the migrations have run.
 * The repositories on the same client append with EventAppend in their transactions, and
 * EventSequencer numbers the events. Reads return numbered events only (`id > 0`), and
 * first run the sequencer when some event is unnumbered: a reader gets every event
 * committed before its call.
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* PgNotifications
    yield* Migrations.Migrations
    const sequencer = yield* EventSequencer
    const guard = unavailableOrDie(Duration.fromInputUnsafe(options.timeout))

    const rows = SqlSchema.findAll({
      Request: Schema.Struct({
        after: Schema.BigInt,
        limit: Schema.Number,
        types: Schema.Array(EventTypeSchema)
      }),
      Result: EventRow,
      execute: (page) => pageStatement(sql, page)
    })

    // Ids become visible in order (EventSequencer): the highest has no lower one still to come.
    const highest = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.BigInt }),
      execute: () => sql`SELECT coalesce(max(id), 0)::bigint AS id FROM events WHERE id > 0`
    })

    // One backward probe of (type, id) per type, and what retention removed of each.
    const headRows = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ type: EventTypeSchema, id: Schema.NullOr(EventId), swept: Schema.NullOr(EventId) }),
      execute: () =>
        sql`SELECT t.type, h.id, (s.through_by_type ->> t.type)::bigint AS swept
            FROM unnest(${EventTypeSchema.literals}::text[]) AS t(type)
            CROSS JOIN LATERAL (SELECT max(e.id) AS id FROM events e WHERE e.type = t.type AND e.id > 0) AS h
            CROSS JOIN events_swept AS s`
    })

    const swept = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ through: Schema.BigInt }),
      execute: () => sql`SELECT through FROM events_swept`
    })

    // One bounded statement: the oldest `limit` numbered events before the cutoff (a
    // provisional negative id, written by an instance of a release before migration 0015,
    // is not in the feed yet and would lead the order), and the watermarks (all, and per
    // type) raised to the last of them, in one transaction (a CTE's DELETE and UPDATE commit together).
    const sweepBatch = SqlSchema.findOne({
      Request: Schema.Struct({ before: Schema.DateTimeUtcFromDate, limit: Schema.Number }),
      Result: Schema.Struct({ removed: Schema.BigInt }),
      execute: ({ before, limit }) =>
        sql`WITH gone AS (
              DELETE FROM events WHERE id IN (
                SELECT id FROM events WHERE occurred_at < ${before} AND id > 0 ORDER BY id LIMIT ${limit}
              ) RETURNING id, type
            ), raised AS (
              UPDATE events_swept SET through = greatest(through, (SELECT max(id) FROM gone)),
                through_by_type = through_by_type || (
                  SELECT jsonb_object_agg(type, last) FROM (SELECT type, max(id) AS last FROM gone GROUP BY type) AS by_type
                )
              WHERE EXISTS (SELECT 1 FROM gone) RETURNING through
            )
            SELECT count(*)::bigint AS removed FROM gone`
    })

    const page: EventLog["Service"]["page"] = Spans.method("EventLog.page", (query) =>
      Effect.andThen(sequencer.run, rows({ after: query.after, limit: query.limit, types: query.types ?? [] })).pipe(
        Effect.map((found) => found.map(toEvent)),
        guard
      )
    )

    const latest = Effect.andThen(sequencer.run, highest(undefined)).pipe(
      Effect.catchTag("NoSuchElementError", Effect.die),
      Effect.map(({ id }) => id === 0n ? 0n : EventId.make(id)),
      guard,
      Effect.withSpan("EventLog.latest")
    )

    const heads = Effect.andThen(sequencer.run, headRows(undefined)).pipe(
      Effect.map((rows) => ({
        latest: new Map(rows.flatMap((row) => row.id === null ? [] : [[row.type, row.id] as const])),
        swept: new Map(rows.flatMap((row) => row.swept === null ? [] : [[row.type, row.swept] as const]))
      })),
      guard,
      Effect.withSpan("EventLog.heads")
    )

    const sweptThrough = swept(undefined).pipe(
      Effect.catchTag("NoSuchElementError", Effect.die),
      Effect.map(({ through }) => through === 0n ? 0n : EventId.make(through)),
      guard,
      Effect.withSpan("EventLog.sweptThrough")
    )

    const sweep: EventLog["Service"]["sweep"] = Spans.method("EventLog.sweep", (query) =>
      sweepBatch(query).pipe(
        Effect.catchTag("NoSuchElementError", Effect.die),
        Effect.map(({ removed }) => Number(removed)),
        guard
      )
    )

    return EventLog.of({
      page,
      latest,
      heads,
      sweptThrough,
      sweep,
      appended: notifications.listen(EVENTS_CHANNEL)
    })
  })

/** An EventLog on the SqlClient in context (PostgreSQL server or embedded PGlite). */
export const layer = (
  options: Options
): Layer.Layer<EventLog, Migrator.MigrationError | SqlError.SqlError, PgClient.PgClient | SqlClient.SqlClient> =>
  Layer.effect(EventLog, make(options)).pipe(
    Layer.provide(Layer.merge(Migrations.layer, EventSequencer.layer)),
    Layer.provide(options.listen === true ? PgNotifications.layer : PgNotifications.none)
  )
