/**
 * The housekeeping autovacuum does on a PostgreSQL server. PGlite runs PostgreSQL in
 * single-user mode, which has no autovacuum, so without this the planner never gets
 * statistics (a filtered page of 10,000 pets was planned as a bitmap scan and sort:
 * 2.7 ms, against 0.1 ms once analyzed) and rows left dead by updates are never
 * reclaimed. Nor is there a checkpointer: PostgreSQL checkpoints only when PGlite closes,
 * so after a kill -9 recovery would replay all the WAL written since the last clean stop.
 *
 * PGlite is one connection that runs one statement at a time, to its end: a statement
 * cannot be cancelled there (`statement_timeout` has no effect in PGlite: a
 * `pg_sleep(1)` under a 100 ms timeout ran its full second). So a pass is made of short
 * statements, one per table, and requests sent meanwhile run between them; and a pass is
 * bounded by sending no more statements once {@link PASS_WITHIN} has passed.
 */
import { Duration, Effect } from "effect"
import type { SqlClient } from "effect/sql"

/** When the first pass runs: after start-up, once the migrations have made the tables. */
export const FIRST_PASS_AFTER = Duration.seconds(10)

/** How often a pass runs after that. */
export const PASS_EVERY = Duration.minutes(5)

/**
 * Longest a pass sends statements for. The table it is at still finishes (PGlite cannot
 * stop it); the tables it did not reach come first in the next pass.
 */
export const PASS_WITHIN = Duration.seconds(5)

export interface Schedule {
  readonly firstPassAfter: Duration.Duration
  readonly passEvery: Duration.Duration
  readonly passWithin: Duration.Duration
}

const defaultSchedule: Schedule = { firstPassAfter: FIRST_PASS_AFTER, passEvery: PASS_EVERY, passWithin: PASS_WITHIN }

/**
 * The tables autovacuum would take up, by its default thresholds: dead rows past 50 +
 * 20% of the table (vacuum), rows inserted past 1,000 + 20% (vacuum, which keeps the
 * visibility map current), rows changed past 50 + 10% (analyze), and a table never
 * analyzed. A table nothing changed costs a pass nothing. The least recently maintained
 * come first.
 */
const tablesDue = (sql: SqlClient.SqlClient) =>
  sql<{ readonly name: string }>`
    SELECT format('%I.%I', s.schemaname, s.relname) AS name
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
       OR s.n_ins_since_vacuum > 1000 + 0.2 * greatest(c.reltuples, 0)
       OR s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
       OR s.last_analyze IS NULL
    ORDER BY greatest(s.last_vacuum, s.last_analyze) NULLS FIRST, s.relid`

/**
 * Now and then, `VACUUM (ANALYZE)` of each table that changed, one statement each, then a
 * `CHECKPOINT`, which bounds the WAL even after a pass stopped at its bound. A pass over
 * its bound is logged, and so is a failed one; the next one runs as planned.
 */
export const run = (sql: SqlClient.SqlClient, schedule: Schedule = defaultSchedule): Effect.Effect<never> => {
  const vacuum = Effect.gen(function*() {
    // The session's counts reach the statistics at most once a second, when it is idle:
    // flushed now, the counts read next include the last second's changes.
    yield* sql`SELECT pg_stat_force_next_flush()`
    const tables = yield* tablesDue(sql)
    let done = 0
    yield* Effect.forEach(tables, ({ name }) =>
      sql.unsafe(`VACUUM (ANALYZE) ${name}`).pipe(Effect.andThen(Effect.sync(() => done++))), { discard: true }).pipe(
        Effect.timeoutOrElse({
          duration: schedule.passWithin,
          orElse: () =>
            Effect.logWarning("Embedded database maintenance stopped at its bound").pipe(
              Effect.annotateLogs({
                "maintenance.bound": Duration.format(schedule.passWithin),
                "maintenance.tables.done": done,
                "maintenance.tables.left": tables.length - done
              })
            )
        })
      )
  })
  const pass = vacuum.pipe(
    Effect.andThen(sql`CHECKPOINT`),
    Effect.withSpan("EmbeddedMaintenance.pass"),
    Effect.ignore({ log: "Warn", message: "Embedded database maintenance (VACUUM ANALYZE, CHECKPOINT) failed" })
  )
  return pass.pipe(
    Effect.delay(schedule.firstPassAfter),
    Effect.andThen(Effect.forever(Effect.delay(pass, schedule.passEvery)))
  )
}
