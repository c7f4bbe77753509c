/**
 * The housekeeping autovacuum does on a PostgreSQL server. PGlite runs PostgreSQL in
 * single-user mode, which has no autovacuum and does not even count changes per table,
 * so without this the planner never gets statistics (a filtered page of 10,000 pets was
 * planned as a bitmap scan and sort: 2.7 ms, against 0.1 ms once analyzed) and rows
 * left dead by updates are never reclaimed. Nor is there a checkpointer: PostgreSQL
 * checkpoints only when PGlite closes, so after a kill -9 recovery would replay all the
 * WAL written since the last clean stop.
 */
import { Duration, Effect } from "effect"
import type { SqlClient } from "effect/sql"

/** When the first pass runs: after start-up, once the migrations have made the tables. */
export const FIRST_PASS_AFTER = Duration.seconds(10)

/** How often a pass runs after that. */
export const PASS_EVERY = Duration.minutes(5)

/**
 * `VACUUM (ANALYZE)` of the whole database and a `CHECKPOINT`, now and then. A pass holds
 * the one connection while it runs (milliseconds for thousands of rows; the visibility map
 * lets a repeated pass skip pages nothing changed), so it runs rarely. A failed pass is
 * logged and the next one runs as planned.
 */
export const run = (sql: SqlClient.SqlClient): Effect.Effect<never> => {
  const pass = sql`VACUUM (ANALYZE)`.pipe(
    Effect.andThen(sql`CHECKPOINT`),
    Effect.withSpan("EmbeddedMaintenance.pass"),
    Effect.ignore({ log: "Warn", message: "Embedded database maintenance (VACUUM ANALYZE, CHECKPOINT) failed" })
  )
  return pass.pipe(
    Effect.delay(FIRST_PASS_AFTER),
    Effect.andThen(Effect.forever(Effect.delay(pass, PASS_EVERY)))
  )
}
