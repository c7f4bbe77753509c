/**
 * PostgreSQL notifications for the SQL adapters: ONE connection per instance, beside the
 * client's pool, LISTENs on every channel an adapter asks for (the key changes, the event
 * feed). sql-pg's `PgClient.listen` reserves a pool connection per channel; this holds one
 * session for all of them, named in `pg_stat_activity`, kept alive and replaced when lost.
 *
 * The adapters provide {@link PgNotifications.layer} themselves, as they do Migrations:
 * built together, they share one (a layer is built once per build).
 */
import type { PgClient } from "@effect/sql-pg"
import { Cause, Context, Duration, Effect, Exit, Fiber, FiberSet, Layer, PubSub, Queue, Schema, Scope, Stream } from "effect"
import type { SqlError } from "effect/sql"
import * as ReleaseDeadline from "../process/ReleaseDeadline.ts"
import { SqlPg } from "./SqlPgDriver.ts"

/** The connection's `application_name`, to tell it apart in `pg_stat_activity`. */
export const APPLICATION_NAME = "animal-store notifications"
/** How often the connection is asked for a round trip. */
export const HEARTBEAT_INTERVAL = Duration.millis(300)
/** Longest a round trip may take before the connection is replaced. */
export const HEARTBEAT_TIMEOUT = Duration.millis(500)

const CONNECTION = "the LISTEN connection"
// A replaced connection's close stops its heartbeat statement, which sql-pg gives up on after 5 s.
const LOST_CONNECTION_TIMEOUT = Duration.seconds(10)

/** The connection did not answer a heartbeat in time. */
class HeartbeatMissed extends Schema.TaggedError<HeartbeatMissed>()("HeartbeatMissed", {
  message: Schema.String
}) {}

const make = Effect.gen(function*() {
  const pg = yield* SqlPg.PgClient.PgClient
  // One hub per channel asked for, kept across connections.
  const hubs = new Map<string, PubSub.PubSub<void>>()
  // Channels asked for after a connection began, for it to LISTEN on too.
  const asked = yield* Queue.unbounded<readonly [string, PubSub.PubSub<void>]>()

  // One connection's life. Its fibers (the heartbeat, the LISTENs, one forwarder per
  // channel) run for ever; the first that fails ends it. A connection whose backend
  // stops answering receives nothing and says nothing, so it is asked for a round trip
  // every HEARTBEAT_INTERVAL and replaced when one takes longer than HEARTBEAT_TIMEOUT:
  // a notification is heard within a second, not at the next poll.
  const session = Effect.gen(function*() {
    const connection = yield* SqlPg.PgConnection.make({ ...pg.config, applicationName: APPLICATION_NAME })
    const pinned = yield* connection.pin
    const fibers = yield* FiberSet.make<never, SqlError.SqlError | HeartbeatMissed>()
    // A channel asked for as this connection began may be both in `hubs` and in `asked`.
    const listening = new Set<string>()
    const listenOn = ([channel, hub]: readonly [string, PubSub.PubSub<void>]) =>
      Effect.gen(function*() {
        if (listening.has(channel)) return
        listening.add(channel)
        const notifications = yield* pinned.listen(channel)
        // A notification sent while nobody listened is lost: beginning to listen is a signal.
        yield* PubSub.publish(hub, undefined)
        yield* FiberSet.run(fibers, Effect.forever(Effect.andThen(Queue.take(notifications), PubSub.publish(hub, undefined))))
      })
    // The statement runs in a fiber of its own: a missed beat is reported at its deadline,
    // not once sql-pg has given up on the statement (seconds later).
    const roundTrip = Effect.flatMap(Effect.forkScoped(pinned.query("SELECT 1")), (beat) =>
      Fiber.join(beat).pipe(Effect.timeoutOrElse({
        duration: HEARTBEAT_TIMEOUT,
        orElse: () => Effect.fail(new HeartbeatMissed({ message: `no answer within ${Duration.format(HEARTBEAT_TIMEOUT)}` }))
      })))
    yield* FiberSet.run(fibers, Effect.forever(Effect.andThen(Effect.sleep(HEARTBEAT_INTERVAL), roundTrip)))
    yield* FiberSet.run(
      fibers,
      Effect.andThen(
        Effect.forEach([...hubs], listenOn, { discard: true }),
        Effect.forever(Effect.flatMap(Queue.take(asked), listenOn))
      )
    )
    return yield* FiberSet.join(fibers)
  })

  // The session running now, closed by this layer's release (within its deadline).
  let current: Scope.Closeable | undefined
  const connectForEver = Effect.forever(Effect.gen(function*() {
    const scope = yield* Scope.make()
    current = scope
    const exit = yield* Effect.exit(Scope.provide(session, scope))
    current = undefined
    // The next connection does not wait for this one, whose backend may not answer.
    yield* Effect.forkDetach(Effect.ignoreCause(ReleaseDeadline.close(scope, exit, CONNECTION, LOST_CONNECTION_TIMEOUT)))
    if (Exit.isFailure(exit)) {
      const error = Cause.squash(exit.cause)
      yield* Effect.logWarning(`LISTEN connection lost, reconnecting: ${error instanceof Error ? error.message : String(error)}`)
      // A silent connection is replaced at once; one that failed is tried again a second later.
      if (!(error instanceof HeartbeatMissed)) yield* Effect.sleep("1 second")
    }
  }))
  // Not forkScoped: interrupting a fiber waits for it, and one stuck in its LISTEN (a
  // backend that stopped answering mid-set-up) takes sql-pg 5 s to give up. Stopping it
  // and closing its session share the deadline, under the connection's name.
  const connecting = yield* Effect.forkDetach(connectForEver)
  yield* Effect.addFinalizer((exit) =>
    ReleaseDeadline.bound(CONNECTION)(Effect.andThen(
      Fiber.interrupt(connecting),
      Effect.suspend(() => current === undefined ? Effect.void : Scope.close(current, exit))
    ))
  )

  return {
    listen: (channel: string) =>
      Stream.unwrap(Effect.gen(function*() {
        // Made first, then looked up and recorded in one step: two callers of a new channel share one hub.
        const made = yield* PubSub.sliding<void>(1)
        const known = hubs.get(channel)
        if (known === undefined) hubs.set(channel, made)
        const hub = known ?? made
        // Subscribed before the LISTEN is asked for, so that its first signal is not missed.
        const subscription = yield* PubSub.subscribe(hub)
        if (known === undefined) yield* Queue.offer(asked, [channel, hub])
        return Stream.fromSubscription(subscription)
      }))
  }
})

/** What an adapter hears of other processes through PostgreSQL's NOTIFY. */
export class PgNotifications extends Context.Service<PgNotifications, {
  /**
   * A signal for each notification on `channel`, and one each time the LISTEN on it
   * begins (at first, and on every replacement connection): a notification sent while
   * nobody listened is lost, so a consumer reads again. It never fails.
   */
  readonly listen: (channel: string) => Stream.Stream<void>
}>()("animal-store/postgres/PgNotifications") {
  /** One connection of its own to the sql-pg client's server, from the client's configuration. */
  static readonly layer: Layer.Layer<PgNotifications, never, PgClient.PgClient> = Layer.effect(PgNotifications, make)

  /** Hears nothing: for PGlite, whose one connection cannot be given to a listener; its readers poll. */
  static readonly none: Layer.Layer<PgNotifications> = Layer.succeed(PgNotifications, { listen: () => Stream.never })
}
