import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Runs `change` in a transaction that then rolls back: the repositories join it (their
 * own transactions become savepoints), as they join an idempotent create's.
 */
export const rolledBack = <A, E, R>(change: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(Effect.andThen(change, Effect.fail("roll back" as const)))).pipe(
      Effect.catch(() => Effect.void),
      Effect.catchDefect(() => Effect.void)
    )
