/**
 * The dispatcher on one store, in process, with the TestClock: the receiver is a
 * WebhookSender that records each delivery and answers as the test says.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, DateTime, Deferred, Duration, Effect, Layer, Option, Random, Schedule } from "effect"
import { TestClock } from "effect/testing"
import * as WebhookSenderHttp from "../../../src/adapters/webhooks/WebhookSenderHttp.ts"
import * as WebhookDispatcher from "../../../src/application/webhooks/WebhookDispatcher.ts"
import type { EventType } from "../../../src/domain/events/EventType.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import type { AttemptResult, DeliveryAttempt } from "../../../src/domain/webhooks/DeliveryAttempt.ts"
import type { WebhookId } from "../../../src/domain/webhooks/WebhookId.ts"
import type { WebhookUrl } from "../../../src/domain/webhooks/WebhookUrl.ts"
import { EventLog } from "../../../src/ports/events/EventLog.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import { WebhookRepository } from "../../../src/ports/webhooks/WebhookRepository.ts"
import { type WebhookDelivery, WebhookSender } from "../../../src/ports/webhooks/WebhookSender.ts"
import { recordingTracer } from "../../adapters/observability/RecordingTracer.ts"

type Answer = AttemptResult["outcome"]

/**
 * The receiver: every delivery it got, by URL, what it answers (by URL, default
 * delivered), and, by URL, what it waits for before it answers (default nothing). A URL
 * in `wires` is sent by that sender instead (a real one), its result recorded the same way.
 */
type Received = WebhookDelivery & { readonly at: number; readonly answer: Answer }

const makeReceiver = () => {
  const got: Array<Received> = []
  // By URL too, so that a test waiting on a thousand subscriptions looks each one up at once.
  const byUrl = new Map<string, Array<Received>>()
  const record = (received: Received) => {
    got.push(received)
    const forUrl = byUrl.get(received.url)
    if (forUrl === undefined) byUrl.set(received.url, [received])
    else forUrl.push(received)
  }
  const answers = new Map<string, Answer>()
  const holds = new Map<string, Effect.Effect<void>>()
  const wires = new Map<string, WebhookSender["Service"]["send"]>()
  const sender = WebhookSender.of({
    check: (url) => Effect.succeed(url as WebhookUrl),
    send: (delivery) =>
      wires.has(delivery.url)
        ? Effect.tap(wires.get(delivery.url)!(delivery), (result) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => record({ ...delivery, at: clock.currentTimeMillisUnsafe(), answer: result.outcome }))
          ))
        : Effect.clockWith((clock) =>
        Effect.sync(() => {
          const outcome = answers.get(delivery.url) ?? "delivered"
          record({ ...delivery, at: clock.currentTimeMillisUnsafe(), answer: outcome })
          return {
            outcome,
            httpStatus: outcome === "delivered" ? 204 : outcome === "gone" ? 410 : 503,
            durationMs: 1,
            error: outcome === "delivered" ? undefined : `${outcome}`
          }
        })
      ).pipe(Effect.tap(() => holds.get(delivery.url) ?? Effect.void))
  })
  return { got, answers, holds, wires, sender, to: (url: string): ReadonlyArray<Received> => [...(byUrl.get(url) ?? [])] }
}

const pet = (name: string) => new NewPet({ name: PetName.make(name), categoryId: CategoryId.make(1n) })
const url = (path: string) => `https://receiver.example/${path}` as WebhookUrl

/**
 * Lets the dispatcher run: the TestClock moves by `step` `times` times, with real time in
 * between for a SQL store's round trips, until `done` holds.
 */
const until = (done: () => boolean, options: { readonly step?: Duration.Input; readonly times?: number } = {}) =>
  Effect.gen(function*() {
    for (let i = 0; i < (options.times ?? 200); i++) {
      if (done()) return
      yield* TestClock.adjust(options.step ?? "500 millis")
      yield* TestClock.withLive(Effect.sleep("20 millis"))
    }
    assert.fail("the dispatcher did not get there")
  })

/**
 * The attempts recorded for `webhook`, once `done` holds of them: an attempt is recorded just
 * after the receiver answers, so a test that saw the answer waits for the record (real time).
 */
const recordedWhen = (webhook: WebhookId, done: (attempts: ReadonlyArray<DeliveryAttempt>) => boolean) =>
  WebhookRepository.use((repository) => repository.deliveries(webhook, { after: 0n, limit: 1000 })).pipe(
    Effect.repeat({ until: done, schedule: Schedule.spaced("20 millis"), times: 250 }),
    TestClock.withLive
  )

const subscribe = (path: string, types: readonly [EventType, ...Array<EventType>] = ["pet.created"]) =>
  Effect.gen(function*() {
    const repository = yield* WebhookRepository
    const createdAt = DateTime.makeUnsafe(yield* Clock.currentTimeMillis)
    const after = yield* (yield* EventLog).latest
    return (yield* repository.create({ url: url(path), types, createdAt, after })).webhook
  })

/** How many times the dispatcher read the log's pages and heads and claimed, since the test began. */
const calls = { page: 0, heads: 0, claim: 0, claimed: 0 }

/** The store's EventLog and WebhookRepository, counting the dispatcher's reads and claims. */
const counted = (context: Context.Context<PetRepository | EventLog | WebhookRepository>) => {
  const log = Context.get(context, EventLog)
  const repository = Context.get(context, WebhookRepository)
  return context.pipe(
    Context.add(EventLog, EventLog.of({
      ...log,
      page: (query) => Effect.andThen(Effect.sync(() => calls.page++), log.page(query)),
      heads: Effect.andThen(Effect.sync(() => calls.heads++), log.heads)
    })),
    Context.add(WebhookRepository, WebhookRepository.of({
      ...repository,
      claim: (request) =>
        Effect.tap(Effect.andThen(Effect.sync(() => calls.claim++), repository.claim(request)), (targets) =>
          Effect.sync(() => calls.claimed += targets.length))
    }))
  )
}

/** Runs the dispatcher tests against `store`; it must start empty. */
export const webhookDispatcherContract = (
  name: string,
  store: Layer.Layer<PetRepository | EventLog | WebhookRepository, unknown>
) => {
  const receiver = makeReceiver()
  const dispatcher = WebhookDispatcher.layer({ owner: `test-${name}`, lease: "30 seconds" }).pipe(
    Layer.provide(Layer.succeed(WebhookSender)(receiver.sender))
  )
  // Each test has a store of its own, and runs the dispatcher under its own TestClock,
  // from the time it sets (the store's own fibers keep the live clock).
  const run = <A, E, R>(body: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const context = counted(yield* Layer.build(store))
      calls.page = 0
      calls.claim = 0
      calls.claimed = 0
      return yield* Effect.gen(function*() {
        yield* TestClock.setTime(Date.now())
        yield* Layer.build(dispatcher)
        return yield* body
      }).pipe(Effect.provide(TestClock.layer()), Effect.provideContext(context))
    })
  return describe(`WebhookDispatcher: ${name}`, () => {
    it.live("delivers each event once, in order, signed with the subscription's secret; only what follows the subscription", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const before = yield* pets.create(pet("before"))
        // The subscription is made after it (a SQL store dates events by the database's clock).
        yield* TestClock.withLive(Effect.sleep("5 millis"))
        yield* TestClock.setTime(Date.now())
        const webhook = yield* subscribe("in-order")
        const created = yield* Effect.forEach(["a", "b", "c"], (name) => pets.create(pet(name)))
        yield* until(() => receiver.to(webhook.url).length >= 3)
        const got = receiver.to(webhook.url)
        assert.deepStrictEqual(got.map((delivery) => JSON.parse(delivery.body).data.name), ["a", "b", "c"])
        assert.notInclude(got.map((delivery) => JSON.parse(delivery.body).data.id), Number(before.id))
        const [first] = got
        const body = JSON.parse(first!.body)
        assert.strictEqual(body.type, "pet.created")
        assert.strictEqual(body.data.id, Number(created[0]!.id))
        assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
        assert.match(first!.messageId, /^evt_\d+$/)
        assert.strictEqual(first!.secrets.length, 1)
        // Nothing more comes: each was delivered once.
        yield* TestClock.adjust("1 minute")
        yield* TestClock.withLive(Effect.sleep("50 millis"))
        assert.strictEqual(receiver.to(webhook.url).length, 3)
        const attempts = yield* recordedWhen(webhook.id, (attempts) => attempts.length >= 3)
        assert.deepStrictEqual(attempts.map((attempt) => [attempt.outcome, attempt.attempt]), [
          ["delivered", 1],
          ["delivered", 1],
          ["delivered", 1]
        ])
      })), 120_000)

    it.live("a delivery's span links to the trace of the request that made the change", () => {
      const { spans, tracer } = recordingTracer()
      return run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const webhook = yield* subscribe("traced")
        const request = yield* pets.create(pet("traced")).pipe(Effect.andThen(Effect.currentSpan), Effect.withSpan("request"))
        yield* until(() => receiver.to(webhook.url).length >= 1)
        const deliveries = spans.filter((span) =>
          span.name === "WebhookDispatcher.deliver" && span.attributes.get("webhook.id") === String(webhook.id)
        )
        assert.strictEqual(deliveries.length, 1)
        const [link] = deliveries[0]!.links
        assert.strictEqual(link?.span.traceId, request.traceId)
        // The span that recorded the event: the repository's create, within the request.
        const recordedBy = spans.find((span) => span.spanId === link?.span.spanId)
        assert.strictEqual(recordedBy?.traceId, request.traceId)
        assert.notStrictEqual(recordedBy, request)
      })).pipe(Effect.withTracer(tracer))
    }, 120_000)

    it.live("an idle instance records no trace; a subscription's deliveries are a trace of their own", () => {
      const { spans, tracer } = recordingTracer()
      return run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const webhook = yield* subscribe("quiet")
        yield* pets.create(pet("first"))
        yield* until(() => receiver.to(webhook.url).length >= 1)
        yield* TestClock.withLive(Effect.sleep("300 millis"))
        // 40 polls (20 s) with nothing to do: nothing traced, by the dispatcher or the store.
        const before = spans.length
        for (let i = 0; i < 40; i++) {
          yield* TestClock.adjust("500 millis")
          yield* TestClock.withLive(Effect.sleep("10 millis"))
        }
        yield* TestClock.withLive(Effect.sleep("1100 millis"))
        assert.deepStrictEqual(spans.slice(before).map((span) => span.name), [])
        // Work: one root per claimed subscription, its attempts inside it.
        yield* pets.create(pet("second")).pipe(Effect.withSpan("request"))
        const request = spans.find((span) => span.name === "request")!
        yield* until(() => receiver.to(webhook.url).length >= 2)
        yield* TestClock.withLive(Effect.sleep("100 millis"))
        const roots = spans.filter((span) => span.name === "WebhookDispatcher.deliverTo")
        assert.strictEqual(roots.length, 2)
        assert.isTrue(roots.every((root) => Option.isNone(root.parent)))
        const last = spans.filter((span) => span.name === "WebhookDispatcher.deliver").at(-1)!
        assert.strictEqual(last.traceId, roots[1]!.traceId)
        assert.strictEqual(last.links[0]?.span.traceId, request.traceId)
      })).pipe(Effect.withTracer(tracer))
    }, 120_000)

    it.live("a failed delivery is retried on the schedule with the same message id; the next event waits for it", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const webhook = yield* subscribe("retried")
        receiver.answers.set(webhook.url, "retry")
        yield* pets.create(pet("r1"))
        yield* pets.create(pet("r2"))
        yield* until(() => receiver.to(webhook.url).length >= 3, { step: "1 second" })
        const tries = receiver.to(webhook.url)
        // All three are the first event's: the second one is not sent before it.
        assert.deepStrictEqual(new Set(tries.map((delivery) => delivery.messageId)).size, 1)
        // The jitter drawn is the most the schedule allows (full jitter, 0–5 s then 0–10 s), so
        // each retry waits that long at least: the clock may only run past it, however slow
        // the machine.
        assert.isAtLeast(tries[1]!.at - tries[0]!.at, 4_990)
        assert.isAtLeast(tries[2]!.at - tries[1]!.at, 9_990)
        const recorded = yield* recordedWhen(webhook.id, (attempts) => attempts.length >= 3)
        assert.deepStrictEqual(recorded.slice(0, 3).map((attempt) => [attempt.outcome, attempt.attempt]), [
          ["retry", 1],
          ["retry", 2],
          ["retry", 3]
        ])
        receiver.answers.delete(webhook.url)
        yield* until(() => receiver.to(webhook.url).some((delivery) => JSON.parse(delivery.body).data.name === "r2"), {
          step: "5 seconds"
        })
        const names = receiver.to(webhook.url).map((delivery) => JSON.parse(delivery.body).data.name)
        assert.deepStrictEqual(names.slice(-2), ["r1", "r2"])
      })).pipe(Effect.provideService(Random.Random, { nextDoubleUnsafe: () => 0.999, nextIntUnsafe: () => 0 })), 120_000)

    it.live("an event still failing after 24 hours is given up, recorded so, and the next one is delivered", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const webhook = yield* subscribe("given-up")
        receiver.answers.set(webhook.url, "retry")
        yield* pets.create(pet("doomed"))
        yield* pets.create(pet("survivor"))
        const started = yield* Clock.currentTimeMillis
        yield* until(() => receiver.to(webhook.url).length >= 1)
        // Every attempt fails until the first event is given up and the second one is tried.
        yield* until(() => receiver.to(webhook.url).some((delivery) => JSON.parse(delivery.body).data.name === "survivor"), {
          step: "10 minutes",
          times: 400
        })
        receiver.answers.delete(webhook.url)
        yield* until(() =>
          receiver.to(webhook.url).some((delivery) =>
            delivery.answer === "delivered" && JSON.parse(delivery.body).data.name === "survivor"
          ), { step: "10 minutes", times: 400 })
        const doomed = receiver.to(webhook.url).filter((delivery) => JSON.parse(delivery.body).data.name === "doomed")
        // Retried across the window, none scheduled past it (the clock moves by 10 minutes
        // at a time, and a SQL store's round trips can let it move again before an attempt).
        assert.isAtLeast(doomed.at(-1)!.at - started, Duration.toMillis(Duration.hours(23)))
        assert.isAtMost(doomed.at(-1)!.at - started, Duration.toMillis(Duration.hours(25)))
        assert.isAbove(doomed.length, 11)
        const recorded = yield* recordedWhen(webhook.id, (attempts) => attempts.at(-1)?.outcome === "delivered")
        const lastOfDoomed = recorded.filter((attempt) => attempt.eventId === recorded[0]!.eventId).at(-1)!
        assert.strictEqual(lastOfDoomed.outcome, "given_up")
        assert.include(lastOfDoomed.error ?? "", "given up")
        assert.strictEqual(recorded.at(-1)!.outcome, "delivered")
      })), 120_000)

    it.live("a 410 answer disables the subscription: nothing more is sent to it", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const repository = yield* WebhookRepository
        const webhook = yield* subscribe("gone")
        receiver.answers.set(webhook.url, "gone")
        yield* pets.create(pet("g1"))
        yield* until(() => receiver.to(webhook.url).length >= 1)
        yield* pets.create(pet("g2"))
        yield* TestClock.adjust("1 hour")
        yield* TestClock.withLive(Effect.sleep("100 millis"))
        assert.strictEqual(receiver.to(webhook.url).length, 1)
        const state = (yield* repository.get(webhook.id)).state
        assert.strictEqual(state._tag, "disabled")
        assert.include(state._tag === "disabled" ? state.reason : "", "410")
        const recorded = yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 })
        assert.deepStrictEqual(recorded.map((attempt) => [attempt.outcome, attempt.httpStatus]), [["gone", 410]])
      })), 120_000)

    it.live("re-enabled, a subscription resumes from its cursor: the event it stopped at, tried afresh, then those made while it was disabled", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const repository = yield* WebhookRepository
        const webhook = yield* subscribe("re-enabled")
        receiver.answers.set(webhook.url, "gone")
        yield* pets.create(pet("e1"))
        yield* until(() => receiver.to(webhook.url).length >= 1)
        yield* repository.get(webhook.id).pipe(
          Effect.repeat({ until: (got) => got.state._tag === "disabled", schedule: Schedule.spaced("20 millis"), times: 250 }),
          TestClock.withLive
        )
        yield* pets.create(pet("e2"))
        yield* pets.create(pet("e3"))
        yield* TestClock.adjust("1 minute")
        yield* TestClock.withLive(Effect.sleep("100 millis"))
        assert.strictEqual(receiver.to(webhook.url).length, 1)
        receiver.answers.delete(webhook.url)
        yield* repository.enable(webhook.id)
        yield* until(() => receiver.to(webhook.url).length >= 4)
        const got = receiver.to(webhook.url)
        assert.deepStrictEqual(got.map((delivery) => JSON.parse(delivery.body).data.name), ["e1", "e1", "e2", "e3"])
        assert.strictEqual(got[1]!.messageId, got[0]!.messageId)
        const recorded = yield* recordedWhen(webhook.id, (attempts) => attempts.length >= 4)
        assert.deepStrictEqual(recorded.map((attempt) => [attempt.outcome, attempt.attempt]), [
          ["gone", 1],
          ["delivered", 1],
          ["delivered", 1],
          ["delivered", 1]
        ])
        assert.strictEqual((yield* repository.get(webhook.id)).state._tag, "active")
      })), 120_000)

    it.live("a URL refused at delivery (its host now resolves to a loopback address) disables the subscription with the reason; no retries", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const repository = yield* WebhookRepository
        const webhook = yield* subscribe("refused")
        // The real sender, without WEBHOOK_ALLOW_PRIVATE, whose DNS answers 127.0.0.1 for the host now.
        const refusing = WebhookSenderHttp.make({ allowPrivate: false, resolve: async () => [{ address: "127.0.0.1", family: 4 }] })
        receiver.wires.set(webhook.url, refusing.send)
        yield* pets.create(pet("refused-1"))
        yield* until(() => receiver.to(webhook.url).length >= 1)
        const why = "receiver.example resolves to 127.0.0.1, a loopback address"
        const recorded = yield* recordedWhen(webhook.id, (attempts) => attempts.length >= 1)
        assert.deepStrictEqual(recorded.map((attempt) => [attempt.outcome, attempt.httpStatus, attempt.error]), [["gone", undefined, why]])
        yield* pets.create(pet("refused-2"))
        // A retry would come within 5 s, the next event at once: an hour passes, poll by poll.
        for (let i = 0; i < 12; i++) {
          yield* TestClock.adjust("5 minutes")
          yield* TestClock.withLive(Effect.sleep("20 millis"))
        }
        assert.strictEqual(receiver.to(webhook.url).length, 1)
        const state = (yield* repository.get(webhook.id)).state
        assert.strictEqual(state._tag, "disabled")
        assert.strictEqual(state._tag === "disabled" ? state.reason : "", `the URL is refused: ${why}`)
        assert.notInclude((yield* repository.pending).map((entry) => entry.webhook.id), webhook.id)
        assert.strictEqual((yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 })).length, 1)
      })), 120_000)

    it.live("an instance that paused past its lease records nothing once another took the subscription, and does not send again while it holds it", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const repository = yield* WebhookRepository
        const webhook = yield* subscribe("paused")
        const resume = yield* Deferred.make<void>()
        // The POST goes out, then this instance stalls before it records the answer.
        receiver.holds.set(webhook.url, Deferred.await(resume))
        yield* pets.create(pet("p1"))
        yield* until(() => receiver.to(webhook.url).length >= 1)
        // Its 30 s lease has ended by the other instance's clock, which claims the subscription.
        const later = DateTime.makeUnsafe((yield* Clock.currentTimeMillis) + 31_000)
        const taken = yield* repository.claim({
          now: later,
          owner: "other-instance",
          until: DateTime.add(later, { hours: 1 }),
          limit: 1000,
          heads: (yield* (yield* EventLog).heads).latest
        })
        assert.include(taken.map((target) => target.webhook.id), webhook.id)
        receiver.holds.delete(webhook.url)
        yield* Deferred.succeed(resume, undefined)
        yield* TestClock.adjust("5 seconds")
        yield* TestClock.withLive(Effect.sleep("100 millis"))
        assert.deepStrictEqual(yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 }), [])
        const progress = (yield* repository.pending).find((entry) => entry.webhook.id === webhook.id)?.progress
        assert.deepStrictEqual(progress, { cursor: 0n, attempt: 0, nextAttemptAt: undefined })
        assert.strictEqual(receiver.to(webhook.url).length, 1)
        // Once the holder lets go, the event is delivered again (at least once), and recorded.
        yield* repository.release(webhook.id, "other-instance")
        yield* until(() => receiver.to(webhook.url).length >= 2)
        yield* TestClock.withLive(Effect.sleep("100 millis"))
        const recorded = yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 })
        assert.deepStrictEqual(recorded.map((attempt) => attempt.outcome), ["delivered"])
      })), 120_000)

    it.live("a receiver down for 10 minutes gets every event, in order, when it returns", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const webhook = yield* subscribe("down")
        receiver.answers.set(webhook.url, "retry")
        const names = Array.from({ length: 12 }, (_, i) => `d${i}`)
        for (const name of names) {
          yield* pets.create(pet(name))
          yield* TestClock.adjust("50 seconds")
          yield* TestClock.withLive(Effect.sleep("20 millis"))
        }
        // Down for 10 minutes, tried again and again; now it answers.
        const started = yield* Clock.currentTimeMillis
        assert.isAtLeast(receiver.to(webhook.url).length, 2)
        receiver.answers.delete(webhook.url)
        const deliveredNames = () =>
          receiver.to(webhook.url).filter((delivery) => delivery.at > started).map((delivery) => JSON.parse(delivery.body).data.name)
        yield* until(() => deliveredNames().includes(names.at(-1)!), { step: "30 seconds", times: 400 })
        const isDelivered = (attempt: DeliveryAttempt) => attempt.outcome === "delivered"
        const delivered = (yield* recordedWhen(webhook.id, (attempts) => attempts.filter(isDelivered).length >= names.length))
          .filter(isDelivered)
          .map((attempt) => attempt.eventId)
        assert.strictEqual(delivered.length, names.length)
        assert.deepStrictEqual(deliveredNames().filter((name, index, all) => all.indexOf(name) === index), names)
        assert.deepStrictEqual(delivered, [...delivered].sort((a, b) => (a < b ? -1 : 1)))
        // The receiver saw them in order, the last attempt at each after it came back.
        const lastOf = new Map<string, number>()
        receiver.to(webhook.url).forEach((delivery, index) => lastOf.set(JSON.parse(delivery.body).data.name, index))
        const order = names.map((name) => lastOf.get(name)!)
        assert.deepStrictEqual(order, [...order].sort((a, b) => a - b))
      })), 120_000)

    it.live("events removed by retention before delivery are recorded given up; the next event's tries start again", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const log = yield* EventLog
        const webhook = yield* subscribe("retention-gap")
        receiver.answers.set(webhook.url, "retry")
        yield* Effect.forEach(["lost-1", "lost-2", "lost-3"], (name) => pets.create(pet(name)))
        yield* until(() => receiver.to(webhook.url).length >= 2, { step: "1 second" })
        const lost = yield* log.page({ after: 0n, limit: 10, types: ["pet.created"] })
        // Retention removes them all while the receiver is down.
        while ((yield* log.sweep({ before: DateTime.makeUnsafe("2100-01-01T00:00:00Z"), limit: 100 })) > 0) continue
        receiver.answers.delete(webhook.url)
        yield* pets.create(pet("kept"))
        yield* until(() => receiver.to(webhook.url).some((delivery) => JSON.parse(delivery.body).data.name === "kept"), {
          step: "1 second"
        })
        const recorded = yield* recordedWhen(webhook.id, (attempts) => attempts.at(-1)?.outcome === "delivered")
        const tries = recorded.filter((attempt) => attempt.outcome === "retry")
        assert.isAtLeast(tries.length, 2)
        assert.isTrue(tries.every((attempt) => attempt.eventId === lost[0]!.id))
        const gap = recorded.filter((attempt) => attempt.outcome === "given_up")
        assert.strictEqual(gap.length, 1)
        assert.strictEqual(gap[0]!.eventId, lost.at(-1)!.id)
        assert.strictEqual(gap[0]!.attempt, tries.at(-1)!.attempt)
        assert.include(gap[0]!.error ?? "", "removed by retention")
        const delivered = recorded.at(-1)!
        assert.deepStrictEqual([delivered.outcome, delivered.attempt], ["delivered", 1])
        // No event of the gap was sent after it.
        assert.deepStrictEqual(
          receiver.to(webhook.url).filter((delivery) => delivery.answer === "delivered").map((delivery) => JSON.parse(delivery.body).data.name),
          ["kept"]
        )
      })), 120_000)

    it.live("1,000 subscriptions each get every event; caught-up ones ahead of a new one do not starve it", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const many = yield* Effect.forEach(Array.from({ length: 1000 }, (_, i) => i), (i) => subscribe(`many-${i}`))
        const names = ["m1", "m2", "m3"]
        for (const name of names) yield* pets.create(pet(name))
        const reached = () => many.every((webhook) => receiver.to(webhook.url).length >= names.length)
        yield* until(reached, { step: "100 millis", times: 6000 })
        for (const webhook of many) {
          assert.deepStrictEqual(receiver.to(webhook.url).map((delivery) => JSON.parse(delivery.body).data.name), names)
        }
        // All caught up: a subscription made now, with the highest id, gets the next event.
        // (Dated by the real clock: the test's has run ahead, and a SQL store dates events by the database's.)
        const late = (yield* (yield* WebhookRepository).create({
          url: url("late"),
          types: ["pet.created"],
          createdAt: DateTime.makeUnsafe(Date.now()),
          after: yield* (yield* EventLog).latest
        })).webhook
        yield* pets.create(pet("m4"))
        yield* until(() => receiver.to(late.url).length >= 1 && many.every((webhook) => receiver.to(webhook.url).length >= 4), {
          step: "100 millis",
          times: 6000
        })
        assert.strictEqual(JSON.parse(receiver.to(late.url)[0]!.body).data.name, "m4")
      })), 300_000)

    it.live("two instances share 1,000 subscriptions: each gets every event once", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        // A second instance on the same store, with its own leases.
        yield* Layer.build(WebhookDispatcher.layer({ owner: `test-${name}-second`, lease: "30 seconds" }).pipe(
          Layer.provide(Layer.succeed(WebhookSender)(receiver.sender))
        ))
        const many = yield* Effect.forEach(Array.from({ length: 1000 }, (_, i) => i), (i) => subscribe(`shared-${i}`))
        const names = ["s1", "s2"]
        for (const name of names) yield* pets.create(pet(name))
        yield* until(() => many.every((webhook) => receiver.to(webhook.url).length >= names.length), { step: "100 millis", times: 6000 })
        yield* TestClock.withLive(Effect.sleep("200 millis"))
        for (const webhook of many) {
          assert.deepStrictEqual(receiver.to(webhook.url).map((delivery) => JSON.parse(delivery.body).data.name), names)
        }
      })), 300_000)

    it.live("caught-up subscriptions cost about one claim per poll, and no read of the log", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        const idle = yield* Effect.forEach(Array.from({ length: 100 }, (_, i) => i), (i) => subscribe(`idle-${i}`))
        yield* pets.create(pet("once"))
        yield* until(() => idle.every((webhook) => receiver.to(webhook.url).length >= 1), { step: "100 millis", times: 2000 })
        yield* TestClock.withLive(Effect.sleep("200 millis"))
        const before = { ...calls }
        // 20 polls of 500 ms.
        for (let i = 0; i < 20; i++) {
          yield* TestClock.adjust("500 millis")
          yield* TestClock.withLive(Effect.sleep("10 millis"))
        }
        assert.strictEqual(calls.page - before.page, 0)
        assert.strictEqual(calls.claimed - before.claimed, 0)
        assert.isAtMost(calls.claim - before.claim, 25)
        assert.isTrue(idle.every((webhook) => receiver.to(webhook.url).length === 1))
      })), 300_000)

    it.live("with no active subscription, changes wake no claim and no read of the heads; one made later is delivered to", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        // The first pass (at start, a poll's) has found no subscription.
        yield* TestClock.withLive(Effect.sleep("200 millis"))
        const before = { ...calls }
        yield* Effect.forEach(Array.from({ length: 30 }, (_, i) => `unheard-${i}`), (name) => pets.create(pet(name)))
        yield* TestClock.withLive(Effect.sleep("300 millis"))
        assert.strictEqual(calls.claim - before.claim, 0)
        assert.strictEqual(calls.heads - before.heads, 0)
        const webhook = yield* subscribe("made-later")
        yield* pets.create(pet("heard"))
        yield* until(() => receiver.to(webhook.url).length >= 1)
        assert.deepStrictEqual(receiver.to(webhook.url).map((delivery) => JSON.parse(delivery.body).data.name), ["heard"])
      })), 120_000)

    it.live("a new subscription on a long log is delivered to without walking it", () =>
      run(Effect.gen(function*() {
        const pets = yield* PetRepository
        yield* Effect.forEach(Array.from({ length: 300 }, (_, i) => `old-${i}`), (name) => pets.create(pet(name)))
        yield* TestClock.withLive(Effect.sleep("5 millis"))
        yield* TestClock.setTime(Date.now())
        const before = calls.page
        const webhook = yield* subscribe("new-on-long-log")
        yield* pets.create(pet("first-for-it"))
        yield* until(() => receiver.to(webhook.url).length >= 1)
        assert.strictEqual(JSON.parse(receiver.to(webhook.url)[0]!.body).data.name, "first-for-it")
        assert.isAtMost(calls.page - before, 3)
      })), 120_000)
  })
}
