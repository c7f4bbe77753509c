/**
 * Releases with a deadline. A resource whose other end has stopped answering (a frozen
 * database backend, a hung Redis) can make its release wait for ever: a connection pool
 * waits for the connection a stuck statement holds, a LISTEN connection for its UNLISTEN,
 * a Redis client for its QUIT. Past its deadline such a release is left to finish on its
 * own, the shutdown goes on, and it ends in a failure naming what did not close, so the
 * process exits non-zero and says why.
 */
import { Data, Duration, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"

/** How long one resource may take to close before it is left behind. */
export const TIMEOUT = Duration.seconds(3)

/** A release that did not finish within its deadline. */
export class ReleaseTimedOut extends Data.TaggedError("ReleaseTimedOut")<{
  readonly resource: string
  readonly message: string
}> {}

// Releases begun and not finished, by resource, for the last-resort report of a process that must exit.
const closing = new Map<string, number>()

const begin = (resource: string) => closing.set(resource, (closing.get(resource) ?? 0) + 1)
const end = (resource: string) => {
  const left = (closing.get(resource) ?? 1) - 1
  if (left === 0) closing.delete(resource)
  else closing.set(resource, left)
}

/** The resources whose release has begun and not finished (left behind included). */
export const unfinished = (): ReadonlyArray<string> => [...closing.keys()]

/**
 * Runs `release` with a deadline: on time, its own result; past it, a log line and a
 * `ReleaseTimedOut` defect naming `resource`, while `release` goes on in the background.
 */
export const bound = (resource: string, timeout: Duration.Duration = TIMEOUT) => <A, E>(
  release: Effect.Effect<A, E>
): Effect.Effect<A, E> =>
  Effect.gen(function*() {
    begin(resource)
    // Detached: waiting for an interrupted release would be waiting for the release.
    const fiber = yield* Effect.forkDetach(Effect.ensuring(release, Effect.sync(() => end(resource))))
    const exit = yield* Effect.interruptible(Fiber.await(fiber)).pipe(Effect.timeoutOption(timeout))
    if (Option.isSome(exit)) return yield* exit.value
    const message = `${resource} did not close within ${Duration.format(timeout)}; left behind`
    yield* Effect.logError(message).pipe(Effect.annotateLogs({ "not.closed": resource }))
    return yield* Effect.die(new ReleaseTimedOut({ resource, message }))
  })

/** Closes `scope` within the deadline (see {@link bound}). */
export const close = (scope: Scope.Closeable, exit: Exit.Exit<unknown, unknown>, resource: string, timeout?: Duration.Duration) =>
  bound(resource, timeout)(Scope.close(scope, exit))

/** `self`, whose release (everything it acquired) is bounded by the deadline and named `resource`. */
export const layer = (resource: string, timeout?: Duration.Duration) => <A, E, R>(
  self: Layer.Layer<A, E, R>
): Layer.Layer<A, E, R> =>
  Layer.fromBuild((memoMap, scope) =>
    Effect.gen(function*() {
      const own = yield* Scope.make()
      yield* Scope.addFinalizerExit(scope, (exit) => close(own, exit, resource, timeout))
      return yield* Layer.buildWithMemoMap(self, memoMap, own)
    })
  )
