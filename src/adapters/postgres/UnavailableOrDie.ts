import { Duration, Effect, Fiber, Schema } from "effect"
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
 */
export const unavailableOrDie = (timeout: Duration.Duration) =>
<A, E, R>(effect: Effect.Effect<A, E | SqlError.SqlError | Schema.SchemaError, R>) =>
  Effect.gen(function*() {
    const call = yield* Effect.forkDetach(effect)
    return yield* Fiber.join(call).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(
            new StoreUnavailable({ message: `the database did not answer within ${Duration.format(timeout)}` })
          )
      }),
      // Abandoned (timed out, or the client went away): stop the call without waiting for it.
      Effect.ensuring(Effect.sync(() => call.interruptUnsafe()))
    )
  }).pipe(
    Effect.catchIf(SqlError.isSqlError, (error) =>
      error.reason._tag === "ConnectionError" || error.reason._tag === "AuthenticationError" || error.isRetryable
        ? Effect.fail(new StoreUnavailable({ message: `the database is unavailable: ${error.reason._tag}` }))
        : Effect.die(error)),
    Effect.catchIf(Schema.isSchemaError, Effect.die)
  )
