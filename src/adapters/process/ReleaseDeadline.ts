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

// Steps of a shutdown under way, outermost first: what a stuck shutdown names when no
// bounded release is pending, so that the report is never empty.
const phases: Array<string> = []

/**
 * The resources whose release has begun and not finished (left behind included); with
 * none, the innermost step under way (see {@link phase}).
 */
export const unfinished = (): ReadonlyArray<string> => closing.size > 0 ? [...closing.keys()] : phases.slice(-1)

/**
 * `effect`, named `name` while it runs, without a deadline of its own: a step of a
 * shutdown that is made of bounded releases and of steps each bounded in itself.
 */
export const phase = (name: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    phases.push(name)
    return Effect.ensuring(effect, Effect.sync(() => phases.splice(phases.lastIndexOf(name), 1)))
  })

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

// `self`, built in a scope of its own, released by `release`.
const releasedBy = (release: (own: Scope.Closeable, exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>) =>
<A, E, R>(self: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.fromBuild((memoMap, scope) =>
    Effect.gen(function*() {
      const own = yield* Scope.make()
      yield* Scope.addFinalizerExit(scope, (exit) => release(own, exit))
      return yield* Layer.buildWithMemoMap(self, memoMap, own)
    })
  )

/** `self`, whose release (everything it acquired) is bounded by the deadline and named `resource`. */
export const layer = (resource: string, timeout?: Duration.Duration) =>
  releasedBy((own, exit) => close(own, exit, resource, timeout))

/** `self`, whose release is the step `name` (see {@link phase}), without a deadline of its own. */
export const layerPhase = (name: string) => releasedBy((own, exit) => phase(name)(Scope.close(own, exit)))
