import { type Context, Duration, Effect, type Fiber, Schema } from "effect"
import { SqlError } from "effect/sql"
import { StoreUnavailable } from "../../domain/Errors.ts"

/**
 * Bounds one store call, statements and transaction alike, and sorts its failures.
 * Connection loss, timeouts and conflicts a retry can fix (serialization failures,
 * deadlocks) are the caller's "try again"; anything else (a constraint the domain should
 * have caught, bad SQL, a row no service could have written) is a bug and dies.
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
      Effect.catchIf(SqlError.isSqlError, (error) =>
        error.reason._tag === "ConnectionError" || error.reason._tag === "AuthenticationError" || error.isRetryable
          ? Effect.fail(new StoreUnavailable({ message: `the database is unavailable: ${error.reason._tag}` }))
          : Effect.die(error)),
      Effect.catchIf(Schema.isSchemaError, Effect.die)
    )
}
