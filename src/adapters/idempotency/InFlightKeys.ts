import { Deferred, type Duration, Effect, Exit } from "effect"
import { IdempotencyKeyInUse } from "../../domain/idempotency/IdempotencyErrors.ts"

/**
 * The idempotency keys this process is running a create for. Every store adapter of
 * IdempotentCreates goes through it first: a duplicate that arrives while the first is
 * still running waits here (no connection, no transaction held) for at most `wait`, then
 * tries again and finds the first one's answer. It is also the whole "in progress" check
 * of the embedded store, whose single connection could not wait on a database lock.
 */
export class InFlightKeys {
  readonly #running = new Map<string, Deferred.Deferred<void>>()
  readonly #wait: Duration.Duration

  constructor(wait: Duration.Duration) {
    this.#wait = wait
  }

  /** Runs `task` as the only holder of `id` in this process, or fails with IdempotencyKeyInUse. */
  exclusive<A, E, R>(id: string, task: Effect.Effect<A, E, R>): Effect.Effect<A, E | IdempotencyKeyInUse, R> {
    const attempt: Effect.Effect<A, E | IdempotencyKeyInUse, R> = Effect.acquireUseRelease(
      Effect.sync(() => {
        const holder = this.#running.get(id)
        if (holder !== undefined) return { own: false, done: holder }
        const done = Deferred.makeUnsafe<void>()
        this.#running.set(id, done)
        return { own: true, done }
      }),
      (claim) =>
        claim.own ? task : Deferred.await(claim.done).pipe(
          Effect.timeoutOrElse({ duration: this.#wait, orElse: () => Effect.fail(new IdempotencyKeyInUse()) }),
          Effect.andThen(() => attempt)
        ),
      (claim) =>
        claim.own
          ? Effect.sync(() => {
            this.#running.delete(id)
            Deferred.doneUnsafe(claim.done, Exit.void)
          })
          : Effect.void
    )
    return attempt
  }
}
