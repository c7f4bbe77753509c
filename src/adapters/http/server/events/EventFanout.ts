import { Cause, Clock, Context, Duration, Effect, type Fiber, FiberHandle, Layer, Option, PubSub, Queue, type Scope, Semaphore, Stream } from "effect"
import { type StoreUnavailable, StreamLimitReached } from "../../../../domain/Errors.ts"
import type { EventId } from "../../../../domain/events/EventId.ts"
import type { EventType } from "../../../../domain/events/EventType.ts"
import type { StoreEvent } from "../../../../domain/events/StoreEvent.ts"
import { EventLog } from "../../../../ports/events/EventLog.ts"
import * as SseFrames from "./SseFrames.ts"

/**
 * Events read from the log in one go, and the positions before and after them. Their
 * frames are written once for the whole instance, by the first subscriber that sends
 * them: every stream that takes the whole batch sends the same bytes.
 */
interface Batch {
  readonly from: bigint
  readonly to: bigint
  readonly events: ReadonlyArray<StoreEvent>
  all?: Uint8Array | undefined
  frames?: ReadonlyArray<string> | undefined
}

/** Tuning of the fan-out. */
export interface Options {
  /**
   * How often the reader loop looks at the log without being woken: the fallback for
   * changes this process cannot hear of (another instance's, on PostgreSQL).
   */
  readonly pollInterval: Duration.Input
  /** How long an SSE stream stays quiet before it sends a comment line, so that proxies keep it open. */
  readonly heartbeat: Duration.Input
  /** SSE streams this instance holds at once (EVENTS_MAX_STREAMS); one more is refused. */
  readonly maxStreams: number
  /**
   * After the loop has published a batch, how long the changes that follow gather into
   * the next one: under a flood of writes each stream wakes and writes once per
   * interval, not once per change. The first change after a quiet spell goes out at once.
   */
  readonly coalesce: Duration.Input
}

/**
 * The feed's defaults, which the service's settings (EVENTS_HEARTBEAT, EVENTS_MAX_STREAMS)
 * default to: a heartbeat after 15 quiet seconds, a look at the log every 250 ms when
 * nothing woke the reader (the embedded store's commits, or PostgreSQL's while its LISTEN
 * connection is replaced): one indexed query per instance, whatever the number of
 * subscribers, and none without any; at most 10,000 streams (ServiceConfig's
 * EVENTS_MAX_STREAMS says why); and batches at most every 50 ms under load.
 */
export const DEFAULTS = {
  pollInterval: Duration.millis(250),
  heartbeat: Duration.seconds(15),
  maxStreams: 10_000,
  coalesce: Duration.millis(50)
} as const satisfies Options

// Events read per statement by the loop.
const PAGE = 500
// Events read per statement by a stream catching up: what one stream holds at most
// while its client does not read (a page's events and their frames).
export const STREAM_PAGE = 100
// Batches a subscriber may fall behind by; an older one is dropped, and the subscriber,
// seeing the gap, reads what it missed from the log.
const BATCHES_KEPT = 64

/** What a stream follows: where it starts, which types, and whether it may go on. */
export interface Following {
  readonly after: EventId | 0n
  readonly types: ReadonlyArray<EventType> | undefined
  /** Asked before each chunk it sends (events or a heartbeat): false ends the stream (a revoked or expired key). */
  readonly allowed: Effect.Effect<boolean>
}

/**
 * The live feed of one instance, shared by all its SSE subscribers: ONE reader loop
 * pages the log after the last event it saw, woken by the log's `appended` signal and by
 * a periodic poll while any subscriber follows, and publishes what it read to every
 * subscriber from memory, its frames written once. A subscriber costs no query per
 * event; it reads the log only to catch up, a page at a time as its client reads (from
 * its `after` when it starts, or after falling more than {@link BATCHES_KEPT} batches
 * behind).
 */
export class EventFanout extends Context.Service<EventFanout, {
  /**
   * The stream's bytes: a first line, then the frames of the events after `after`, of
   * `types` when given, first from the log, then live, with a heartbeat after each quiet
   * interval, for as long as the stream runs and `allowed` holds.
   */
  readonly follow: (following: Following) => Stream.Stream<Uint8Array, StoreUnavailable>
  /**
   * A place for one stream among the instance's `maxStreams`, held until the caller's
   * scope closes (a request's scope closes once its streamed answer has ended);
   * StreamLimitReached when every place is taken.
   */
  readonly admit: Effect.Effect<void, StreamLimitReached, Scope.Scope>
}>()("animal-store/http/EventFanout") {}

// The frames of the batch's events after `cursor` and of the wanted types, or none.
const framesAfter = (batch: Batch, cursor: bigint, wanted: ReadonlySet<EventType> | undefined): Uint8Array | undefined => {
  if (wanted === undefined && batch.from >= cursor) {
    return batch.all ??= SseFrames.encode(batch.events.map(SseFrames.frame).join(""))
  }
  const frames = batch.frames ??= batch.events.map(SseFrames.frame)
  let text = ""
  batch.events.forEach((event, i) => {
    if (event.id > cursor && (wanted === undefined || wanted.has(event.type))) text += frames[i]
  })
  return text === "" ? undefined : SseFrames.encode(text)
}

/** The fan-out over the EventLog in context, its reader loop running while the layer lives. */
export const layer = (options: Options): Layer.Layer<EventFanout, never, EventLog> =>
  Layer.effect(
    EventFanout,
    Effect.gen(function*() {
      const log = yield* EventLog
      const batches = yield* PubSub.sliding<Batch>(BATCHES_KEPT)
      const wake = yield* Queue.sliding<void>(1)
      const heartbeatMillis = Duration.toMillis(Duration.fromInputUnsafe(options.heartbeat))
      const coalesce = Duration.fromInputUnsafe(options.coalesce)
      // The last event the loop has published; undefined until it has asked the log once.
      let position: bigint | undefined

      // Whether it published anything.
      const drain = Effect.gen(function*() {
        if (position === undefined) position = yield* log.latest
        let published = false
        while (true) {
          const from: bigint = position
          const events = yield* log.page({ after: from as EventId | 0n, limit: PAGE })
          if (events.length === 0) return published
          position = events[events.length - 1]!.id
          yield* PubSub.publish(batches, { from, to: position, events })
          published = true
          if (events.length < PAGE) return published
        }
      }).pipe(
        Effect.catchTag("StoreUnavailable", (error) => Effect.as(Effect.logWarning(`event feed: ${error.message}`), false))
      )

      // With no subscriber the loop reads nothing and sleeps until one comes, and nothing
      // listens to the log's `appended` signal: a change then costs no wake, page read,
      // publish or timer, and an idle instance no poll. The loop forgets its position, so
      // its first batch after a subscriber comes starts from the log's end; a subscriber
      // that caught up only to an earlier event sees the gap and reads what it missed from
      // the log, as after dropped batches.
      let subscribers = 0
      const wakeIfFollowed = Effect.suspend(() => subscribers === 0 ? Effect.void : Queue.offer(wake, undefined))
      // It records no trace: a poll every 250 ms while a stream is open, mostly of nothing.
      yield* Effect.forkScoped(Effect.withTracerEnabled(
        Effect.forever(Effect.andThen(
          Effect.suspend(() =>
            subscribers === 0
              ? Effect.sync(() => position = undefined)
              : Effect.flatMap(drain, (published) => published ? Effect.sleep(coalesce) : Effect.void)
          ),
          Queue.take(wake)
        )),
        false
      ))
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

      const catchingUp = yield* Semaphore.make(1)

      const follow = ({ after, allowed, types }: Following) =>
        Stream.unwrap(Effect.gen(function*() {
          // Subscribed before catching up, so nothing published meanwhile is missed.
          const subscription = yield* PubSub.subscribe(batches)
          yield* Effect.acquireRelease(Effect.andThen(followed, Queue.offer(wake, undefined)), () => unfollowed)
          const wanted = types === undefined || types.length === 0 ? undefined : new Set(types)
          let cursor: bigint = after
          let caughtUp = false
          let connected = false
          let sentAt = yield* Clock.currentTimeMillis

          // The next page from the log; caught up once a page is short, then also past
          // what the loop had published before the page was read (the page saw it all).
          // One stream at a time reads and writes its page: many streams catching up at
          // once (clients that do not read fill their sockets' kernel buffers, megabytes
          // each) take their turns instead of the whole process.
          const catchUp = Semaphore.withPermit(catchingUp)(Effect.gen(function*() {
            const known = position ?? 0n
            const page = yield* log.page({ after: cursor as EventId | 0n, limit: STREAM_PAGE, types })
            if (page.length > 0) cursor = page[page.length - 1]!.id
            if (page.length < STREAM_PAGE) {
              caughtUp = true
              if (known > cursor) cursor = known
            }
            return page.length === 0 ? undefined : SseFrames.encode(page.map(SseFrames.frame).join(""))
          }))

          // The next batch's frames, none when it has none of ours, or a heartbeat once
          // the stream has been quiet for the interval.
          const live = Effect.gen(function*() {
            const quietFor = (yield* Clock.currentTimeMillis) - sentAt
            const taken = yield* Effect.timeoutOption(PubSub.take(subscription), Math.max(0, heartbeatMillis - quietFor))
            if (Option.isNone(taken)) return SseFrames.HEARTBEAT
            const batch = taken.value
            // Dropped batches in between: the log still has them.
            if (batch.from > cursor) {
              caughtUp = false
              return undefined
            }
            const frames = framesAfter(batch, cursor, wanted)
            if (batch.to > cursor) cursor = batch.to
            return frames
          })

          const pull: Effect.Effect<readonly [Uint8Array], StoreUnavailable | Cause.Done> = Effect.gen(function*() {
            if (!connected) {
              connected = true
              return [SseFrames.CONNECTED] as const
            }
            while (true) {
              const chunk = caughtUp ? yield* live : yield* catchUp
              if (chunk === undefined) continue
              if (!(yield* allowed)) return yield* Cause.done()
              sentAt = yield* Clock.currentTimeMillis
              return [chunk] as const
            }
          })
          return Stream.fromPull(Effect.succeed(pull))
        }))

      const places = yield* Semaphore.make(options.maxStreams)
      const admit = Effect.acquireRelease(
        Semaphore.takeIfAvailable(places, 1),
        (taken) => taken ? Semaphore.release(places, 1) : Effect.void
      ).pipe(
        Effect.flatMap((taken) => taken ? Effect.void : Effect.fail(new StreamLimitReached({ limit: options.maxStreams })))
      )

      return EventFanout.of({ follow, admit })
    })
  )
