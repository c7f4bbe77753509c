import { Context, Duration, Effect, type Fiber, FiberHandle, Layer, PubSub, Queue, type Scope, Semaphore, Stream } from "effect"
import { type StoreUnavailable, StreamLimitReached } from "../../../../domain/Errors.ts"
import type { EventId } from "../../../../domain/events/EventId.ts"
import type { EventType } from "../../../../domain/events/EventType.ts"
import type { StoreEvent } from "../../../../domain/events/StoreEvent.ts"
import { EventLog } from "../../../../ports/events/EventLog.ts"

/** Events read from the log in one go, and the positions before and after them. */
interface Batch {
  readonly from: bigint
  readonly to: bigint
  readonly events: ReadonlyArray<StoreEvent>
}

/** Tuning of the fan-out. */
export interface Options {
  /**
   * How often the reader loop looks at the log without being woken: the fallback for
   * changes this process cannot hear of (another instance's, on PostgreSQL).
   */
  readonly pollInterval: Duration.Input
  /** How often an idle SSE stream sends a comment line, so that proxies keep it open. */
  readonly heartbeat: Duration.Input
  /** SSE streams this instance holds at once (EVENTS_MAX_STREAMS); one more is refused. */
  readonly maxStreams: number
}

/**
 * The feed's defaults, which the service's settings (EVENTS_HEARTBEAT, EVENTS_MAX_STREAMS)
 * default to: a heartbeat every 15 seconds, a look at the log every 250 ms when nothing
 * woke the reader (the embedded store's commits, or PostgreSQL's while its LISTEN
 * connection is replaced): one indexed query per instance, whatever the number of
 * subscribers, and none without any; and at most 10,000 streams (ServiceConfig's
 * EVENTS_MAX_STREAMS says why).
 */
export const DEFAULTS = {
  pollInterval: Duration.millis(250),
  heartbeat: Duration.seconds(15),
  maxStreams: 10_000
} as const satisfies Options

// Events read per statement, by the loop and by a subscriber catching up.
const PAGE = 500
// Batches a subscriber may fall behind by; an older one is dropped, and the subscriber,
// seeing the gap, reads what it missed from the log.
const BATCHES_KEPT = 64

/**
 * The live feed of one instance, shared by all its SSE subscribers: ONE reader loop
 * pages the log after the last event it saw, woken by the log's `appended` signal and by
 * a periodic poll while any subscriber follows, and publishes what it read to every
 * subscriber from memory. A subscriber costs no query per event; it reads the log only to
 * catch up (from its `after` when it starts, or after falling more than
 * {@link BATCHES_KEPT} batches behind).
 */
export class EventFanout extends Context.Service<EventFanout, {
  /** The events after `after`, of `types` when given: first from the log, then live, for as long as the stream runs. */
  readonly follow: (
    after: EventId | 0n,
    types: ReadonlyArray<EventType> | undefined
  ) => Stream.Stream<StoreEvent, StoreUnavailable>
  /** How often an idle stream sends a heartbeat. */
  readonly heartbeat: Duration.Duration
  /**
   * A place for one stream among the instance's `maxStreams`, held until the caller's
   * scope closes (a request's scope closes once its streamed answer has ended);
   * StreamLimitReached when every place is taken.
   */
  readonly admit: Effect.Effect<void, StreamLimitReached, Scope.Scope>
}>()("animal-store/http/EventFanout") {}

/** The fan-out over the EventLog in context, its reader loop running while the layer lives. */
export const layer = (options: Options): Layer.Layer<EventFanout, never, EventLog> =>
  Layer.effect(
    EventFanout,
    Effect.gen(function*() {
      const log = yield* EventLog
      const batches = yield* PubSub.sliding<Batch>(BATCHES_KEPT)
      const wake = yield* Queue.sliding<void>(1)
      // The last event the loop has published; undefined until it has asked the log once.
      let position: bigint | undefined

      const drain = Effect.gen(function*() {
        if (position === undefined) position = yield* log.latest
        while (true) {
          const from: bigint = position
          const events = yield* log.page({ after: from as EventId | 0n, limit: PAGE })
          if (events.length === 0) return
          position = events[events.length - 1]!.id
          yield* PubSub.publish(batches, { from, to: position, events })
          if (events.length < PAGE) return
        }
      }).pipe(Effect.catchTag("StoreUnavailable", (error) => Effect.logWarning(`event feed: ${error.message}`)))

      // With no subscriber the loop reads nothing and sleeps until one comes, and nothing
      // listens to the log's `appended` signal: a change then costs no wake, page read,
      // publish or timer, and an idle instance no poll. The loop forgets its position, so
      // its first batch after a subscriber comes starts from the log's end; a subscriber
      // that caught up only to an earlier event sees the gap and reads what it missed from
      // the log, as after dropped batches.
      let subscribers = 0
      const wakeIfFollowed = Effect.suspend(() => subscribers === 0 ? Effect.void : Queue.offer(wake, undefined))
      yield* Effect.forkScoped(Effect.forever(Effect.andThen(
        Effect.suspend(() => subscribers === 0 ? Effect.sync(() => position = undefined) : drain),
        Queue.take(wake)
      )))
      // Started by the first subscriber and stopped by the last, synchronously, so a
      // subscriber that comes while the last one's listener is stopping starts its own.
      const listen = yield* FiberHandle.makeRuntime<never, never, void>()
      let listener: Fiber.Fiber<void> | undefined
      const followed = Effect.sync(() => {
        if (++subscribers === 1) listener = listen(Stream.runForEach(log.appended, () => Queue.offer(wake, undefined)))
      })
      const unfollowed = Effect.sync(() => {
        if (--subscribers === 0) listener?.interruptUnsafe()
      })
      // The poll is a wake of its own: a change costs the loop no timer, nor a race.
      yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(options.pollInterval), wakeIfFollowed)))

      const follow = (after: EventId | 0n, types: ReadonlyArray<EventType> | undefined) =>
        Stream.unwrap(Effect.gen(function*() {
          // Subscribed before catching up, so nothing published meanwhile is missed.
          const subscription = yield* PubSub.subscribe(batches)
          yield* Effect.acquireRelease(Effect.andThen(followed, Queue.offer(wake, undefined)), () => unfollowed)
          const wanted = types === undefined || types.length === 0 ? undefined : new Set(types)
          let cursor: bigint = after
          let caughtUp = false

          // Everything after `cursor` from the log, up to at least what the loop had published.
          const catchUp = Effect.gen(function*() {
            const known = position ?? 0n
            const found: Array<StoreEvent> = []
            while (true) {
              const page = yield* log.page({ after: cursor as EventId | 0n, limit: PAGE, types })
              found.push(...page)
              if (page.length > 0) cursor = page[page.length - 1]!.id
              if (page.length < PAGE) break
            }
            if (known > cursor) cursor = known
            return found
          })

          const next: Effect.Effect<ReadonlyArray<StoreEvent>, StoreUnavailable> = Effect.gen(function*() {
            if (!caughtUp) {
              caughtUp = true
              return yield* catchUp
            }
            const batch = yield* PubSub.take(subscription)
            // Dropped batches in between: the log still has them.
            if (batch.from > cursor) return yield* catchUp
            const fresh = batch.events.filter((event) =>
              event.id > cursor && (wanted === undefined || wanted.has(event.type))
            )
            if (batch.to > cursor) cursor = batch.to
            return fresh
          })
          return Stream.fromEffectRepeat(next).pipe(Stream.flattenIterable)
        }))

      const places = yield* Semaphore.make(options.maxStreams)
      const admit = Effect.acquireRelease(
        Semaphore.takeIfAvailable(places, 1),
        (taken) => taken ? Semaphore.release(places, 1) : Effect.void
      ).pipe(
        Effect.flatMap((taken) => taken ? Effect.void : Effect.fail(new StreamLimitReached({ limit: options.maxStreams })))
      )

      return EventFanout.of({ follow, heartbeat: Duration.fromInputUnsafe(options.heartbeat), admit })
    })
  )
