import { type Context, Duration, Effect, type Fiber, Predicate, Schema } from "effect"
import { SqlError } from "effect/sql"
import { StoreUnavailable } from "../../domain/Errors.ts"

// SQLSTATEs of a schema other than the one the migrations made: an undefined table,
// column, function, type or object, or schema.
const SCHEMA_MISSING = new Set(["42P01", "42703", "42883", "42704", "3F000"])

// SQLSTATEs of a database that is not there for now: dropped (3D000, on connecting), or
// its backend ended by an operator, a shutdown or a start-up still running (57P01–57P05).
const DATABASE_AWAY = new Set(["3D000", "57P01", "57P02", "57P03", "57P04", "57P05"])

/** The error's SQLSTATE, when the server sent one. */
const sqlState = (error: SqlError.SqlError): string | undefined => {
  const cause = error.reason.cause
  return Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : undefined
}

/** A statement met a schema that is not the migrations' (a table, column or function missing). */
export const isSchemaMissing = (error: SqlError.SqlError): boolean => SCHEMA_MISSING.has(sqlState(error) ?? "")

// The StoreUnavailable a failure is, or undefined for a bug.
const unavailable = (error: SqlError.SqlError): StoreUnavailable | undefined => {
  const state = sqlState(error)
  if (state !== undefined && SCHEMA_MISSING.has(state)) {
    return new StoreUnavailable({
      message:
        `the database schema is missing or out of date (SQLSTATE ${state}): the database was replaced or not migrated`
    })
  }
  if (state !== undefined && DATABASE_AWAY.has(state)) {
    return new StoreUnavailable({ message: `the database is unavailable: SQLSTATE ${state}` })
  }
  return error.reason._tag === "ConnectionError" || error.reason._tag === "AuthenticationError" || error.isRetryable
    ? new StoreUnavailable({ message: `the database is unavailable: ${error.reason._tag}` })
    : undefined
}

/**
 * Bounds one store call, statements and transaction alike, and sorts its failures.
 * Connection loss, timeouts and conflicts a retry can fix (serialization failures,
 * deadlocks) are the caller's "try again"; so are a database that is not there and a
 * schema that is not the migrations' (the database was replaced under the instance: see
 * Migrations.watch). Anything else (a constraint the domain should have caught, bad SQL,
 * a row no service could have written) is a bug and dies.
 *
 * The call runs in its own fiber so the deadline holds: timing out a plain effect waits
 * for its interruption, and sql-pg's clean-up of a silent connection takes seconds.
 * Interrupting that fiber rolls back a transaction it has open.
 *
 * One fiber and one timer per call, not `Effect.timeoutOrElse` around a joined fiber:
 * its race forks two more fibers, about 20 µs of the 55 µs the repository added to a
 * 20-row page query (measured in one process against PostgreSQL on this machine). The
 * deadline is wall-clock time, as the database's own `statement_timeout` is; a
 * TestClock does not move it.
 */
export const unavailableOrDie = (timeout: Duration.Duration) => {
  const millis = Duration.toMillis(timeout)
  const timedOut = () =>
    Effect.fail(new StoreUnavailable({ message: `the database did not answer within ${Duration.format(timeout)}` }))
  return <A, E, R>(effect: Effect.Effect<A, E | SqlError.SqlError | Schema.SchemaError, R>) =>
    Effect.withFiber<A, E | StoreUnavailable | SqlError.SqlError | Schema.SchemaError, R>((parent) => {
      // Detached, with the caller's services and span.
      const call: Fiber.Fiber<A, E | SqlError.SqlError | Schema.SchemaError> = Effect.runForkWith(
        parent.context as Context.Context<R>
      )(effect)
      return Effect.callback((resume) => {
        const timer = setTimeout(() => {
          resume(timedOut())
          call.interruptUnsafe()
        }, millis)
        call.addObserver((exit) => {
          clearTimeout(timer)
          resume(exit)
        })
        // Abandoned (the client went away): stop the call without waiting for it.
        return Effect.sync(() => {
          clearTimeout(timer)
          call.interruptUnsafe()
        })
      })
    }).pipe(
      Effect.catchIf(SqlError.isSqlError, (error) => {
        const failure = unavailable(error)
        return failure === undefined ? Effect.die(error) : Effect.fail(failure)
      }),
      Effect.catchIf(Schema.isSchemaError, Effect.die)
    )
}
