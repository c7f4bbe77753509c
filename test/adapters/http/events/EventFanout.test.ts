import { assert, describe, it } from "@effect/vitest"
import { Context, DateTime, Effect, Fiber, Layer, Option, Schedule, Stream } from "effect"
import { EventId } from "../../../../src/domain/events/EventId.ts"
import { EventLog } from "../../../../src/ports/events/EventLog.ts"
import { EventTable } from "../../../../src/adapters/memory/events/EventTable.ts"
import * as EventLogMemory from "../../../../src/adapters/memory/events/EventLogMemory.ts"
import * as EventFanout from "../../../../src/adapters/http/server/events/EventFanout.ts"

const decoder = new TextDecoder()

/** The ids of the frames a stream sends, in order. */
const eventIds = <E>(stream: Stream.Stream<Uint8Array, E>) =>
  Stream.flatMap(stream, (chunk) =>
    Stream.fromIterable(Array.from(decoder.decode(chunk).matchAll(/^id: (\d+)$/gm), (match) => BigInt(match[1]!))))

/** A stream of every type after `after`, always allowed. */
const follow = (fanout: EventFanout.EventFanout["Service"], after: bigint, allowed: Effect.Effect<boolean> = Effect.succeed(true)) =>
  fanout.follow({ after: after === 0n ? 0n : EventId.make(after), types: undefined, allowed })

/**
 * A fan-out over a fresh EventTable whose log counts its reads and the listeners of its
 * `appended` signal; the poll is long, so only wakes deliver.
 */
const setup = Effect.gen(function*() {
  const events = new EventTable()
  const reads = { page: 0, latest: 0 }
  // Catch-up reads under way at once (streams' pages), and the most seen.
  const catchingUp = { now: 0, max: 0, reads: 0 }
  const listening = { now: 0 }
  const log = EventLogMemory.fromTable(events)
  const counted = EventLog.of({
    ...log,
    appended: Stream.unwrap(Effect.sync(() => {
      listening.now++
      return log.appended.pipe(Stream.ensuring(Effect.sync(() => listening.now--)))
    })),
    page: (query) =>
      Effect.andThen(
        Effect.sync(() => {
          reads.page++
          if (query.limit === EventFanout.STREAM_PAGE) {
            catchingUp.reads++
            catchingUp.max = Math.max(catchingUp.max, ++catchingUp.now)
          }
        }),
        // A read that takes a while, as a database's does, so that concurrent ones would overlap.
        Effect.ensuring(
          Effect.andThen(Effect.sleep(query.limit === EventFanout.STREAM_PAGE ? "2 millis" : "0 millis"), log.page(query)),
          Effect.sync(() => {
            if (query.limit === EventFanout.STREAM_PAGE) catchingUp.now--
          })
        )
      ),
    latest: Effect.andThen(Effect.sync(() => reads.latest++), log.latest)
  })
  const fanout = yield* Layer.build(
    EventFanout.layer({ ...EventFanout.DEFAULTS, pollInterval: "1 hour" }).pipe(Layer.provide(Layer.succeed(EventLog, counted)))
  ).pipe(Effect.map(Context.get(EventFanout.EventFanout)))
  const append = (n: number) =>
    Effect.sync(() => {
      for (let i = 0; i < n; i++) events.append("pet.deleted", { id: String(events.lastId + 1n) }, DateTime.nowUnsafe(), undefined)
    })
  const ids = (after: bigint, n: number) =>
    Stream.runCollect(Stream.take(eventIds(follow(fanout, after)), n)).pipe(Effect.map((taken) => Array.from(taken)))
  return { reads, listening, append, ids, fanout, catchingUp }
})

/** Waits until `holds` (checked every 5 ms, for at most 10 s): the fibers may be slow to get there on a loaded machine. */
const until = (holds: () => boolean) =>
  Effect.sync(holds).pipe(
    Effect.repeat({ until: (held) => held, schedule: Schedule.spaced("5 millis") }),
    Effect.timeout("10 seconds"),
    Effect.orDie
  )

describe("EventFanout", () => {
  it.live("reads nothing from the log while no one follows", () =>
    Effect.gen(function*() {
      const { reads, append } = yield* setup
      yield* append(100)
      yield* Effect.sleep("50 millis")
      assert.deepStrictEqual(reads, { page: 0, latest: 0 })
    }).pipe(Effect.scoped))

  it.live("listens to the log's appended signal only while a subscriber follows", () =>
    Effect.gen(function*() {
      const { append, ids, listening } = yield* setup
      yield* append(10)
      assert.strictEqual(listening.now, 0)
      const first = yield* Effect.forkChild(ids(10n, 2))
      const second = yield* Effect.forkChild(ids(10n, 4))
      // Appended only once the signal is listened to: the poll is an hour, so a wake missed hangs.
      yield* until(() => listening.now === 1)
      yield* append(2)
      yield* Fiber.join(first)
      yield* Effect.sleep("20 millis")
      assert.strictEqual(listening.now, 1, "one subscriber still follows")
      yield* append(2)
      assert.deepStrictEqual(yield* Fiber.join(second), [11n, 12n, 13n, 14n])
      yield* until(() => listening.now === 0)
    }).pipe(Effect.scoped))

  it.live("a subscriber that comes after the last one left gets every event after its cursor, then the live ones", () =>
    Effect.gen(function*() {
      const { append, ids } = yield* setup
      const first = yield* Effect.forkChild(ids(0n, 3))
      yield* Effect.sleep("20 millis")
      yield* append(3)
      assert.deepStrictEqual(yield* Fiber.join(first), [1n, 2n, 3n])
      yield* append(2)
      const second = yield* Effect.forkChild(ids(3n, 4))
      yield* Effect.sleep("20 millis")
      yield* append(2)
      assert.deepStrictEqual(yield* Fiber.join(second), [4n, 5n, 6n, 7n])
    }).pipe(Effect.scoped))

  it.live("subscribers joining while changes pour in miss none and get none twice", () =>
    Effect.gen(function*() {
      const { append, ids } = yield* setup
      const writer = yield* Effect.forkChild(Effect.repeat(Effect.andThen(append(3), Effect.yieldNow), { times: 199 }))
      const followers = yield* Effect.forEach([0, 50, 200, 400], (after) =>
        Effect.andThen(Effect.sleep("1 millis"), Effect.forkChild(ids(BigInt(after), 150))))
      yield* Fiber.join(writer)
      const got = yield* Effect.forEach(followers, Fiber.join)
      for (const [i, after] of [0, 50, 200, 400].entries()) {
        assert.deepStrictEqual(got[i], Array.from({ length: 150 }, (_, k) => BigInt(after + k + 1)))
      }
    }).pipe(Effect.scoped))

  it.live("a stream catching up reads the log a page at a time, as its client reads: one that stops reading holds a page", () =>
    Effect.gen(function*() {
      const { append, catchingUp, fanout } = yield* setup
      yield* append(20 * EventFanout.STREAM_PAGE)
      const before = catchingUp.reads
      // The first line and the first page, then the client stops reading.
      const pulled = yield* Stream.runCollect(Stream.take(follow(fanout, 0n), 2))
      yield* Effect.sleep("50 millis")
      assert.strictEqual(catchingUp.reads - before, 1)
      assert.deepStrictEqual(
        Array.from(decoder.decode(pulled[1]!).matchAll(/^id: (\d+)$/gm), (match) => Number(match[1])),
        Array.from({ length: EventFanout.STREAM_PAGE }, (_, i) => i + 1)
      )
    }).pipe(Effect.scoped))

  it.live("a live batch is written once for the instance: every stream of all types sends the same bytes", () =>
    Effect.gen(function*() {
      const { append, fanout } = yield* setup
      yield* append(5)
      const chunks = (n: number) => Stream.runCollect(Stream.take(follow(fanout, 5n), n))
      const streams = yield* Effect.forEach([0, 1, 2], () => Effect.forkChild(chunks(2)))
      yield* Effect.sleep("20 millis")
      yield* append(3)
      const got = yield* Effect.forEach(streams, Fiber.join)
      const [first, ...others] = got.map((each) => each[1]!)
      assert.deepStrictEqual(Array.from(decoder.decode(first!).matchAll(/^id: (\d+)$/gm), (match) => match[1]), ["6", "7", "8"])
      for (const other of others) assert.strictEqual(other, first)
    }).pipe(Effect.scoped))

  it.live("a stream whose caller is no longer allowed ends at its next chunk: an event or a heartbeat", () =>
    Effect.gen(function*() {
      const events = new EventTable()
      const fanout = yield* Layer.build(
        EventFanout.layer({ ...EventFanout.DEFAULTS, pollInterval: "1 hour", heartbeat: "100 millis" }).pipe(
          Layer.provide(Layer.succeed(EventLog, EventLogMemory.fromTable(events)))
        )
      ).pipe(Effect.map(Context.get(EventFanout.EventFanout)))
      const append = () => events.append("pet.deleted", { id: "1" }, DateTime.nowUnsafe(), undefined)
      const allowed = { now: true }
      const check = Effect.sync(() => allowed.now)
      // Revoked while it waits for events: the heartbeat's check ends it.
      const quiet = yield* Effect.forkChild(Stream.runCollect(follow(fanout, 0n, check)))
      // Revoked before the next event: the event is not sent, and the stream ends.
      const busy = yield* Effect.forkChild(Stream.runCollect(eventIds(follow(fanout, 0n, check))))
      yield* Effect.sleep("20 millis")
      append()
      yield* Effect.sleep("20 millis")
      allowed.now = false
      append()
      const quietEnded = yield* Fiber.join(quiet).pipe(Effect.timeoutOption("2 seconds"))
      const busyEnded = yield* Fiber.join(busy).pipe(Effect.timeoutOption("2 seconds"))
      assert.isTrue(Option.isSome(quietEnded) && Option.isSome(busyEnded), "both streams ended")
      assert.deepStrictEqual(Array.from(Option.getOrThrow(busyEnded)), [1n])
    }).pipe(Effect.scoped))

  it.live("streams catching up take their turns: one reads the log at a time, and each gets every event", () =>
    Effect.gen(function*() {
      const { append, catchingUp, ids } = yield* setup
      yield* append(5 * EventFanout.STREAM_PAGE)
      const all = yield* Effect.forEach(Array.from({ length: 8 }, () => 0n), (after) => Effect.forkChild(ids(after, 5 * EventFanout.STREAM_PAGE)))
      const got = yield* Effect.forEach(all, Fiber.join)
      for (const each of got) assert.deepStrictEqual(each, Array.from({ length: 5 * EventFanout.STREAM_PAGE }, (_, i) => BigInt(i + 1)))
      assert.strictEqual(catchingUp.max, 1)
    }).pipe(Effect.scoped))
})
