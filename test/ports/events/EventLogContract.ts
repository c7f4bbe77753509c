import { assert, layer } from "@effect/vitest"
import { DateTime, Effect, type Layer, Option, Result, Schema, type Tracer } from "effect"
import { petJson } from "../../../src/adapters/http/api/PetJsonText.ts"
import { type EventData, eventDataText, orderData, petData, petUpdatedData } from "../../../src/domain/events/EventData.ts"
import type { EventId } from "../../../src/domain/events/EventId.ts"
import { ORDER_EVENT_TYPE, type EventType } from "../../../src/domain/events/EventType.ts"
import type { StoreEvent } from "../../../src/domain/events/StoreEvent.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import type { OrderId } from "../../../src/domain/orders/OrderId.ts"
import type { Pet } from "../../../src/domain/pets/Pet.ts"
import type { PetId } from "../../../src/domain/pets/PetId.ts"
import type { OrderTransitionEvent } from "../../../src/domain/orders/OrderEvent.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { PetPatch } from "../../../src/domain/pets/PetPatch.ts"
import { PetStatus } from "../../../src/domain/pets/PetStatus.ts"
import { EventLog } from "../../../src/ports/events/EventLog.ts"
import type { LoggedEvent } from "../../../src/ports/events/LoggedEvent.ts"
import { OrderRepository } from "../../../src/ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import type { ContractOptions } from "../pets/PetRepositoryContract.ts"
import { recordingTracer, traceParentIds } from "../../adapters/observability/RecordingTracer.ts"

/** What a store's run of the suite may add. */
export interface EventLogContractOptions extends ContractOptions {
  /**
   * Runs `change` inside a transaction of the store that then rolls back (the SQL
   * stores); the memory store has no transaction to roll back.
   */
  readonly rolledBack?: <A, E, R>(
    change: Effect.Effect<A, E, R>
  ) => Effect.Effect<void, never, R | EventLog | PetRepository | OrderRepository>
  /** How many writers run at once in the concurrency property (the pool's size). */
  readonly writers: number
}

const pet = (status?: "available") =>
  new NewPet(
    status === undefined
      ? { name: PetName.make("evented"), categoryId: CategoryId.make(9_007_199_254_740_993n) }
      : { name: PetName.make("evented"), categoryId: CategoryId.make(9_007_199_254_740_993n), status }
  )

// Everything after `after`, read page by page as a feed reader does.
const readAll = (after: EventId | 0n, limit = 7, types?: ReadonlyArray<EventType>) =>
  Effect.gen(function*() {
    const log = yield* EventLog
    const all: Array<LoggedEvent> = []
    for (let from = after;;) {
      const page = yield* log.page({ after: from, limit, types })
      all.push(...page)
      if (page.length < limit) return all
      from = page[page.length - 1]!.id
    }
  })

// The id of the latest event: the suite is the store's only writer.
const highWater = Effect.gen(function*() {
  const events = yield* readAll(0n, 1000)
  return events.length === 0 ? 0n : events[events.length - 1]!.id
})

const isAscending = (ids: ReadonlyArray<bigint>) => ids.every((id, i) => i === 0 || ids[i - 1]! < id)

// One step of a random history: create a pet, or act on the order of one made so far.
const Index = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 }))
const Create = Schema.Struct({ _tag: Schema.Literal("create"), available: Schema.Boolean })
const Place = Schema.Struct({ _tag: Schema.Literal("place"), pet: Index })
const Transition = Schema.Struct({
  _tag: Schema.Literal("transition"),
  order: Index,
  event: Schema.Literals(["approve", "deliver", "cancel"])
})
const Step = Schema.Union([Create, Place, Transition])
const History = Schema.Array(Step).check(Schema.isMaxLength(20))

// The same, with the pets' own changes besides: edits (a rename, a status set or
// removed, or both; refused under an open order when they name the status) and retirements.
const PetsStep = Schema.Union([
  Create,
  Place,
  Transition,
  Schema.Struct({
    _tag: Schema.Literal("edit"),
    pet: Index,
    rename: Schema.Boolean,
    status: Schema.optionalKey(Schema.NullOr(PetStatus))
  }),
  Schema.Struct({ _tag: Schema.Literal("delete"), pet: Index })
])
const PetsHistory = Schema.Array(PetsStep).check(Schema.isMaxLength(24))

const PET_EVENT_TYPES: ReadonlyArray<EventType> = ["pet.created", "pet.updated", "pet.deleted"]

/**
 * The EventLog port's contract, over a store whose repositories record their changes in
 * it. `store` must start empty and be the only writer while the suite runs.
 */
export const eventLogContract = (
  name: string,
  store: Layer.Layer<EventLog | PetRepository | OrderRepository, unknown>,
  options: EventLogContractOptions
) => {
  const timeout = options.timeout ?? 60_000
  const arbitrary = { runs: options.runs }
  layer(store, { timeout })(`EventLog contract: ${name}`, (it) => {
    it.effect("each change appends its event: the resource after the change, int64 exact", () =>
      Effect.gen(function*() {
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const after = yield* highWater
        const created = yield* pets.create(pet("available"))
        const placed = yield* orders.place(created.id)
        const pending = yield* pets.get(created.id)
        const approved = yield* orders.transition(placed.id, "approve")
        const afterApproval = yield* pets.get(created.id)
        const delivered = yield* orders.transition(placed.id, "deliver")
        const sold = yield* pets.get(created.id)
        const events = yield* readAll(after)
        // An order's change that changes its pet's status appends the order's event, then
        // pet.updated; approve leaves the pet pending and appends only its own.
        assert.deepStrictEqual(events.map((event) => [event.type, event.data]), [
          ["pet.created", petData(created)],
          ["order.placed", orderData(placed)],
          ["pet.updated", { ...(petData(pending) as object), changed: ["status"] }],
          ["order.approved", orderData(approved)],
          ["order.delivered", orderData(delivered)],
          ["pet.updated", { ...(petData(sold) as object), changed: ["status"] }]
        ])
        assert.strictEqual(pending.status, "pending")
        assert.strictEqual(sold.status, "sold")
        // Each pet event carries the pet's version, its ETag's. The approval changed nothing of
        // the pet, its version included: the pet.updated before it still holds what a GET answered.
        assert.deepStrictEqual(events.filter((event) => event.type.startsWith("pet.")).map((event) => (event.data as { version: bigint }).version), [1n, 2n, 3n])
        assert.deepStrictEqual(afterApproval, pending)
        const { changed: _, ...pendingData } = events[2]!.data as { readonly [key: string]: EventData }
        assert.strictEqual(eventDataText(pendingData), petJson(afterApproval))
        assert.deepStrictEqual((events[0]!.data as { categoryId: bigint }).categoryId, 9_007_199_254_740_993n)
        assert.isTrue(isAscending(events.map((event) => event.id)))
        assert.isTrue(events[0]!.id > after)
        // The type filter keeps the order and pages the same way.
        assert.deepStrictEqual(
          yield* readAll(after, 1, ["order.approved", "pet.created"]),
          [events[0]!, events[3]!]
        )
      }))

    it.effect("heads are the latest event of each type, and latest the highest of them", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const created = yield* pets.create(pet("available"))
        const placed = yield* orders.place(created.id)
        yield* orders.transition(placed.id, "cancel")
        yield* pets.create(pet("available"))
        const all = yield* readAll(0n, 1000)
        const expected = new Map<EventType, EventId>()
        for (const event of all) expected.set(event.type, event.id)
        const heads = (yield* log.heads).latest
        assert.deepStrictEqual(new Map([...heads].sort(([a], [b]) => a.localeCompare(b))), new Map([...expected].sort(([a], [b]) => a.localeCompare(b))))
        assert.strictEqual(yield* log.latest, all.at(-1)!.id)
        assert.strictEqual(heads.get("pet.created"), all.at(-1)!.id)
      }))

    it.effect("an edit appends pet.updated with the changed fields, a retirement pet.deleted; a refused one nothing", () =>
      Effect.gen(function*() {
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const created = yield* pets.create(pet("available"))
        const after = yield* highWater
        const renamed = yield* pets.update(created.id, new PetPatch({ name: PetName.make("renamed"), status: null }), {})
        // A stale If-Match and a status change under an open order are refused, with no event.
        assert.isTrue(Result.isFailure(yield* Effect.result(pets.delete(created.id, { ifMatch: [created.version] }))))
        const unchanged = yield* pets.update(created.id, new PetPatch({ status: "available" }), {})
        const placed = yield* orders.place(created.id)
        const pending = yield* pets.get(created.id)
        assert.isTrue(Result.isFailure(yield* Effect.result(pets.update(created.id, new PetPatch({ status: "sold" }), {}))))
        const cancelled = yield* orders.transition(placed.id, "cancel")
        const current = yield* pets.get(created.id)
        yield* pets.delete(created.id, { ifMatch: [current.version] })
        assert.deepStrictEqual((yield* readAll(after)).map((event) => [event.type, event.data]), [
          ["pet.updated", { ...(petData(renamed) as object), changed: ["name", "status"] }],
          ["pet.updated", { ...(petData(unchanged) as object), changed: ["status"] }],
          ["order.placed", orderData(placed)],
          ["pet.updated", { ...(petData(pending) as object), changed: ["status"] }],
          ["order.cancelled", orderData(cancelled)],
          ["pet.updated", { ...(petData(current) as object), changed: ["status"] }],
          ["pet.deleted", petData(current)]
        ])
      }))

    it.effect("an event keeps the trace context of the span that recorded it, when spans are exported; none otherwise", () =>
      Effect.gen(function*() {
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const { spans, tracer } = recordingTracer()
        const after = yield* highWater
        // The native tracer (no exporter) makes spans that nothing reads: nothing is captured.
        yield* pets.create(pet()).pipe(Effect.withSpan("untraced request"))
        // Nor while tracing is off, with an exporting tracer installed.
        yield* pets.create(pet()).pipe(Effect.withSpan("disabled request"), Effect.withTracer(tracer), Effect.withTracerEnabled(false))
        const request = yield* Effect.gen(function*() {
          const created = yield* pets.create(pet("available"))
          const placed = yield* orders.place(created.id)
          yield* orders.transition(placed.id, "cancel")
          yield* pets.update(created.id, new PetPatch({ name: PetName.make("traced") }), {})
          yield* pets.delete(created.id, {})
          return yield* Effect.currentSpan
        }).pipe(Effect.withSpan("request"), Effect.withTracer(tracer))
        const events = yield* readAll(after)
        assert.deepStrictEqual(events.slice(0, 2).map((event) => event.traceParent), [undefined, undefined])
        // Each traced event names a span of the request's trace: its repository method's, or one below it.
        const byId = new Map(spans.map((span) => [span.spanId, span]))
        const methodOf = (spanId: string | undefined) => {
          for (let span: Tracer.NativeSpan | undefined = byId.get(spanId ?? ""); span !== undefined;) {
            if (/^(Pet|Order)Repository\./.test(span.name)) return span.name
            span = Option.match(span.parent, { onNone: () => undefined, onSome: (parent) => byId.get(parent.spanId) })
          }
          return undefined
        }
        const traced = events.slice(2)
        for (const event of traced) {
          assert.match(event.traceParent ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
          assert.strictEqual(traceParentIds(event.traceParent!).traceId, request.traceId)
        }
        assert.deepStrictEqual(traced.map((event) => methodOf(traceParentIds(event.traceParent!).spanId)), [
          "PetRepository.create",
          "OrderRepository.place",
          "OrderRepository.place",
          "OrderRepository.transition",
          "OrderRepository.transition",
          "PetRepository.update",
          "PetRepository.delete"
        ])
      }))

    it.effect("a refused change appends nothing", () =>
      Effect.gen(function*() {
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const created = yield* pets.create(pet())
        const after = yield* highWater
        // Not available: the place is refused; an order that does not exist cannot move.
        assert.isTrue(Result.isFailure(yield* Effect.result(orders.place(created.id))))
        assert.isTrue(Result.isFailure(yield* Effect.result(orders.transition(9_000_000n as never, "approve"))))
        assert.deepStrictEqual(yield* readAll(after), [])
      }))

    if (options.rolledBack !== undefined) {
      const rolledBack = options.rolledBack
      it.effect("a change whose transaction rolls back leaves no event", () =>
        Effect.gen(function*() {
          const pets = yield* PetRepository
          const orders = yield* OrderRepository
          const ordered = yield* pets.create(pet("available"))
          const after = yield* highWater
          yield* rolledBack(pets.create(pet()))
          yield* rolledBack(orders.place(ordered.id))
          assert.deepStrictEqual(yield* readAll(after), [])
          // The rolled-back place left the pet orderable: the next place and its event commit.
          const placed = yield* orders.place(ordered.id)
          assert.deepStrictEqual((yield* readAll(after)).map((event) => event.data), [
            orderData(placed),
            petUpdatedData(ordered, yield* pets.get(ordered.id))
          ])
        }))
    }

    it.effect.prop(
      "random histories: exactly one event per change that took effect, in the order of the changes",
      [History],
      ([history]) =>
        Effect.gen(function*() {
          const pets = yield* PetRepository
          const orders = yield* OrderRepository
          const after = yield* highWater
          const made: Array<bigint> = []
          const placed: Array<{ readonly id: bigint; readonly petId: bigint }> = []
          const expected: Array<[EventType, unknown]> = []
          // After an order's event, pet.updated when the change moved its pet's status.
          const expectPetChange = (before: Pet, petId: bigint) =>
            Effect.map(pets.get(petId as never), (after) => {
              if (after.status !== before.status) expected.push(["pet.updated", petUpdatedData(before, after)])
            })
          for (const step of history) {
            if (step._tag === "create") {
              const created = yield* pets.create(pet(step.available ? "available" : undefined))
              made.push(created.id)
              expected.push(["pet.created", petData(created)])
            } else if (step._tag === "place") {
              const petId = made[step.pet]
              if (petId === undefined) continue
              const before = yield* pets.get(petId as never)
              const outcome = yield* Effect.result(orders.place(petId as never))
              if (Result.isSuccess(outcome)) {
                placed.push({ id: outcome.success.id, petId })
                expected.push([ORDER_EVENT_TYPE.place, orderData(outcome.success)])
                yield* expectPetChange(before, petId)
              }
            } else {
              const order = placed[step.order]
              if (order === undefined) continue
              const event: OrderTransitionEvent = step.event
              const before = yield* pets.get(order.petId as never)
              const outcome = yield* Effect.result(orders.transition(order.id as never, event))
              if (Result.isSuccess(outcome)) {
                expected.push([ORDER_EVENT_TYPE[event], orderData(outcome.success)])
                yield* expectPetChange(before, order.petId)
              }
            }
          }
          const events = yield* readAll(after, 3)
          assert.deepStrictEqual(events.map((event) => [event.type, event.data]), expected)
          assert.isTrue(isAscending(events.map((event) => event.id)))
        }),
      { timeout, arbitrary }
    )

    it.effect.prop(
      "random histories: each pet's last pet.* event holds what a GET of the pet answers; a retired pet's is pet.deleted",
      [PetsHistory],
      ([history]) =>
        Effect.gen(function*() {
          const pets = yield* PetRepository
          const orders = yield* OrderRepository
          const after = yield* highWater
          const made: Array<PetId> = []
          const placed: Array<OrderId> = []
          for (const [i, step] of history.entries()) {
            if (step._tag === "create") {
              made.push((yield* pets.create(pet(step.available ? "available" : undefined))).id)
              continue
            }
            if (step._tag === "transition") {
              const orderId = placed[step.order]
              if (orderId !== undefined) yield* Effect.result(orders.transition(orderId, step.event))
              continue
            }
            const petId = made[step.pet]
            if (petId === undefined) continue
            if (step._tag === "place") {
              const outcome = yield* Effect.result(orders.place(petId))
              if (Result.isSuccess(outcome)) placed.push(outcome.success.id)
            } else if (step._tag === "edit") {
              const patch = new PetPatch({
                ...(step.rename ? { name: PetName.make(`renamed at step ${i}`) } : {}),
                ...(step.status === undefined ? {} : { status: step.status })
              })
              yield* Effect.result(pets.update(petId, patch, {}))
            } else {
              yield* Effect.result(pets.delete(petId, {}))
            }
          }
          const last = new Map<bigint, LoggedEvent>()
          for (const event of yield* readAll(after, 50, PET_EVENT_TYPES)) {
            last.set((event.data as { readonly id: bigint }).id, event)
          }
          for (const id of made) {
            const event = last.get(id)
            assert.isDefined(event, `pet ${id} has no pet.* event`)
            const got = yield* Effect.result(pets.get(id))
            if (Result.isFailure(got)) {
              assert.strictEqual(got.failure._tag, "PetNotFound")
              assert.strictEqual(event!.type, "pet.deleted", `pet ${id} is retired`)
              continue
            }
            // pet.updated adds `changed`; the rest is the pet as a GET writes it, byte for byte.
            const { changed: _, ...data } = event!.data as { readonly [key: string]: EventData }
            assert.strictEqual(eventDataText(data), petJson(got.success), `pet ${id}'s last event, ${event!.type}`)
          }
        }),
      { timeout, arbitrary }
    )

    it.effect("a reader polling during concurrent changes never skips an event that commits later", () =>
      Effect.gen(function*() {
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const after = yield* highWater
        const seen: Array<StoreEvent> = []
        let writing = true
        const reader = Effect.gen(function*() {
          const log = yield* EventLog
          let from: EventId | 0n = after
          while (true) {
            const done = !writing
            const page = yield* log.page({ after: from, limit: 50 })
            seen.push(...page)
            if (page.length > 0) from = page[page.length - 1]!.id
            else if (done) return
            else yield* Effect.yieldNow
          }
        })
        // Creates and orders from `writers` fibers at once, each change its own transaction.
        const writer = Effect.forEach(Array.from({ length: 15 }), () =>
          Effect.gen(function*() {
            const created = yield* pets.create(pet("available"))
            const order = yield* orders.place(created.id)
            yield* orders.transition(order.id, "cancel")
          }))
        const writers = Effect.all(Array.from({ length: options.writers }, () => writer), { concurrency: "unbounded" })
          .pipe(Effect.ensuring(Effect.sync(() => writing = false)))
        yield* Effect.all([writers, reader], { concurrency: 2 })
        const committed = yield* readAll(after, 1000)
        // Per round: pet.created, order.placed, pet.updated, order.cancelled, pet.updated.
        assert.strictEqual(committed.length, options.writers * 15 * 5)
        assert.deepStrictEqual(seen.map((event) => event.id), committed.map((event) => event.id))
      }), timeout)

    it.effect("sweep removes the oldest events in bounded batches and raises the watermark", () =>
      Effect.gen(function*() {
        const log = yield* EventLog
        const pets = yield* PetRepository
        for (let i = 0; i < 5; i++) yield* pets.create(pet())
        const kept = yield* readAll(0n, 1000)
        const last = kept[kept.length - 1]!
        // Nothing occurred before the oldest event: nothing goes.
        assert.strictEqual(yield* log.sweep({ before: kept[0]!.occurredAt, limit: 3 }), 0)
        const before = DateTime.add(last.occurredAt, { milliseconds: 1 })
        let removed = 0
        for (let batch = yield* log.sweep({ before, limit: 3 }); batch > 0; batch = yield* log.sweep({ before, limit: 3 })) {
          assert.isAtMost(batch, 3)
          removed += batch
        }
        assert.strictEqual(removed, kept.length)
        assert.strictEqual(yield* log.sweptThrough, last.id)
        // Per type too: the last removed event of each type the sweep met.
        const sweptHeads = new Map<EventType, EventId>()
        for (const event of kept) sweptHeads.set(event.type, event.id)
        const { swept } = yield* log.heads
        for (const [type, id] of sweptHeads) assert.strictEqual(swept.get(type), id, type)
        assert.deepStrictEqual(yield* readAll(0n), [])
        // New events go on after the swept ones.
        yield* pets.create(pet())
        const next = yield* readAll(0n)
        assert.strictEqual(next.length, 1)
        assert.isTrue(next[0]!.id > last.id)
      }))
  })
}
