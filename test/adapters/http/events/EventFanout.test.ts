import { assert, describe, it } from "@effect/vitest"
import { Context, DateTime, Effect, Fiber, Layer, Stream } from "effect"
import { EventId } from "../../../../src/domain/events/EventId.ts"
import { EventLog } from "../../../../src/ports/events/EventLog.ts"
import { EventTable } from "../../../../src/adapters/memory/events/EventTable.ts"
import * as EventLogMemory from "../../../../src/adapters/memory/events/EventLogMemory.ts"
import * as EventFanout from "../../../../src/adapters/http/server/events/EventFanout.ts"

/**
 * A fan-out over a fresh EventTable whose log counts its reads and the listeners of its
 * `appended` signal; the poll is long, so only wakes deliver.
 */
const setup = Effect.gen(function*() {
  const events = new EventTable()
  const reads = { page: 0, latest: 0 }
  const listening = { now: 0 }
  const log = EventLogMemory.fromTable(events)
  const counted = EventLog.of({
    ...log,
    appended: Stream.unwrap(Effect.sync(() => {
      listening.now++
      return log.appended.pipe(Stream.ensuring(Effect.sync(() => listening.now--)))
    })),
    page: (query) => Effect.andThen(Effect.sync(() => reads.page++), log.page(query)),
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
    Stream.runCollect(Stream.take(fanout.follow(after === 0n ? 0n : EventId.make(after), undefined), n)).pipe(
      Effect.map((taken) => Array.from(taken, (event) => event.id))
    )
  return { reads, listening, append, ids }
})

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
      yield* Effect.sleep("20 millis")
      assert.strictEqual(listening.now, 1)
      yield* append(2)
      yield* Fiber.join(first)
      yield* Effect.sleep("20 millis")
      assert.strictEqual(listening.now, 1, "one subscriber still follows")
      yield* append(2)
      assert.deepStrictEqual(yield* Fiber.join(second), [11n, 12n, 13n, 14n])
      yield* Effect.sleep("20 millis")
      assert.strictEqual(listening.now, 0)
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
})
