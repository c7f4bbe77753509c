/**
 * The webhook delivery dispatcher: a background process in each service instance that
 * delivers the store's events to their subscriptions, at least once, in event order per
 * subscription. Instances sharing a store share the work through leases
 * (WebhookRepository.claim): a subscription is delivered to by one instance at a time,
 * and a lease left by a killed instance expires, so another one delivers again.
 */
import { Clock, Context, DateTime, Duration, Effect, FiberSet, Layer, Metric, Option, Queue, Random, Stream, type Tracer } from "effect"
import { Headers, HttpTraceContext } from "effect/http"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import { eventDataText } from "../../domain/events/EventData.ts"
import type { EventId } from "../../domain/events/EventId.ts"
import type { EventType } from "../../domain/events/EventType.ts"
import type { StoreEvent } from "../../domain/events/StoreEvent.ts"
import { AttemptOutcome, type AttemptResult, DELIVERY_ERROR_MAX_LENGTH } from "../../domain/webhooks/DeliveryAttempt.ts"
import { nextAttemptAt } from "../../domain/webhooks/RetrySchedule.ts"
import type { WebhookId } from "../../domain/webhooks/WebhookId.ts"
import { EventLog } from "../../ports/events/EventLog.ts"
import type { LoggedEvent } from "../../ports/events/LoggedEvent.ts"
import { type DeliveryProgress, type DeliveryTarget, WebhookRepository } from "../../ports/webhooks/WebhookRepository.ts"
import { WebhookSender } from "../../ports/webhooks/WebhookSender.ts"

/** Tuning of the dispatcher. */
export interface Options {
  /** This instance's name in the leases it takes: unique among the instances on one store. */
  readonly owner: string
  /** Subscriptions delivered to at once. Default: 8. */
  readonly concurrency?: number | undefined
  /** How often due retries and other instances' events are looked for without a wake-up. Default: 500 ms. */
  readonly poll?: Duration.Input | undefined
  /** How often the backlog gauge is brought up to date. Default: 10 s. */
  readonly sampleEvery?: Duration.Input | undefined
  /**
   * How long a claimed subscription stays with this instance: after a kill, the time
   * before another instance delivers to it. New events are taken from it only in the
   * first half, so one delivery (at most 5 s) ends well within it. Default: 30 s.
   */
  readonly lease?: Duration.Input | undefined
}

/** The metric's outcomes: how each recorded attempt ended (AttemptOutcome). */
const OUTCOMES: ReadonlyArray<AttemptOutcome> = AttemptOutcome.literals

const deliveries = Object.fromEntries(OUTCOMES.map((outcome) => [
  outcome,
  Metric.counter("webhook_deliveries_total", {
    description: "Webhook delivery attempts, by outcome (delivered, gone, retry, given_up: after 24 hours of retries, or removed by retention before delivery).",
    attributes: { outcome },
    incremental: true
  })
])) as Record<AttemptOutcome, Metric.Metric<number, unknown>>

const registryContext = Context.empty()

const oldestAge = Metric.gauge("webhook_oldest_undelivered_event_age_seconds", {
  description: "Age of the oldest event not yet delivered to an active subscription (0 when none waits)."
})

/**
 * The body of a delivery, after Standard Webhooks: `type`, `timestamp` (when the change
 * happened) and `data`, the resource as the API writes it (int64 fields exact).
 */
export const payload = (event: StoreEvent): string =>
  `{"type":"${event.type}","timestamp":"${DateTime.formatIso(event.occurredAt)}","data":${eventDataText(event.data)}}`

/** The message id of every attempt at `event`: receivers deduplicate on it. */
export const messageId = (event: StoreEvent): string => `evt_${event.id}`

/**
 * The delivery span's link to the span that recorded `event`, in the trace of the request
 * that made the change (none when the event was recorded with no trace context).
 */
const changeLinks = (event: LoggedEvent): ReadonlyArray<Tracer.SpanLink> | undefined => {
  if (event.traceParent === undefined) return undefined
  const recorded = HttpTraceContext.w3c(Headers.fromRecordUnsafe({ traceparent: event.traceParent }))
  return Option.isSome(recorded) ? [{ span: recorded.value, attributes: {} }] : undefined
}

const now = Effect.map(Clock.currentTimeMillis, (millis) => DateTime.makeUnsafe(millis))

/** The latest event of `types` (EventLog.heads): a subscription whose cursor is below it has work. */
const lastOfTypes = (types: ReadonlyArray<EventType>, heads: ReadonlyMap<EventType, EventId>): EventId | 0n =>
  types.reduce<EventId | 0n>((last, type) => {
    const head = heads.get(type) ?? 0n
    return head > last ? head : last
  }, 0n)

const settled = (event: StoreEvent): DeliveryProgress => ({ cursor: event.id, attempt: 0, nextAttemptAt: undefined })

// Events read per statement while delivering: one read serves this many attempts.
const PAGE = 50

/**
 * Delivers to one claimed subscription, in event order, until it has nothing due, an
 * attempt failed (its retry waits), or half its lease is gone. Each attempt is recorded
 * with the progress it made before the next one is made: a kill between the POST and
 * the record means the event is delivered again (at least once). Stops when another
 * instance has taken the lease (this one paused past it): its holder goes on.
 */
const deliverTo = (
  target: DeliveryTarget,
  swept: ReadonlyMap<EventType, EventId>,
  owner: string,
  leaseEnd: DateTime.Utc,
  lease: Duration.Duration
) =>
  Effect.gen(function*() {
    const log = yield* EventLog
    const repository = yield* WebhookRepository
    const sender = yield* WebhookSender
    const { webhook } = target
    const takeUntil = DateTime.subtractDuration(leaseEnd, Duration.divideUnsafe(lease, 2))
    let progress = target.progress
    // Retention removed events of its types that it had not received: one record says
    // which (with the tries made at the first of them, if any), and the cursor moves past.
    const lost = lastOfTypes(webhook.types, swept)
    if (lost !== 0n && lost > progress.cursor) {
      const error = `events of its types after ${progress.cursor} through ${lost} were removed by retention ` +
        `(EVENTS_RETENTION) before they were delivered`
      yield* Effect.logWarning(`webhook ${webhook.id}: ${error}`)
      const lostAt = yield* now
      progress = { cursor: lost, attempt: 0, nextAttemptAt: undefined }
      yield* repository.recordAttempt(webhook.id, owner, {
        outcome: "given_up",
        httpStatus: undefined,
        durationMs: 0,
        error,
        eventId: lost,
        attempt: target.progress.attempt,
        attemptedAt: lostAt
      }, progress)
      deliveries.given_up.updateUnsafe(1, registryContext)
    }
    while (DateTime.isLessThan(yield* now, takeUntil)) {
      const events = yield* log.page({ after: progress.cursor, limit: PAGE, types: webhook.types })
      if (events.length === 0) return
      // A new subscription receives only what happened after it was made: the events
      // committed before it but numbered after its start are passed over in one step.
      const fresh = events.findIndex((event) => !DateTime.isLessThan(event.occurredAt, webhook.createdAt))
      const skipped = fresh === -1 ? events.length : fresh
      if (skipped > 0) {
        progress = settled(events[skipped - 1]!)
        yield* repository.advance(webhook.id, owner, progress)
      }
      for (const event of events.slice(skipped)) {
        if (!DateTime.isLessThan(yield* now, takeUntil)) return
        const attempt = progress.attempt + 1
        const attemptedAt = yield* now
        const result: AttemptResult = yield* sender.send({
          url: webhook.url,
          messageId: messageId(event),
          body: payload(event),
          secrets: target.secrets
        }).pipe(
          Effect.tap((result) => Effect.annotateCurrentSpan({ "webhook.outcome": result.outcome })),
          Effect.withSpan("WebhookDispatcher.deliver", {
            attributes: {
              "webhook.id": String(webhook.id),
              "event.id": String(event.id),
              "event.type": event.type,
              "webhook.attempt": attempt
            },
            links: changeLinks(event)
          })
        )
        const failedAt = yield* now
        const firstAttemptAt = progress.firstAttemptAt ?? attemptedAt
        const retryAt = result.outcome === "retry"
          ? nextAttemptAt({ attempt, firstAttemptAt, failedAt, random: yield* Random.next })
          : undefined
        const outcome: AttemptOutcome = result.outcome === "retry" && retryAt === undefined ? "given_up" : result.outcome
        progress = outcome === "retry"
          ? { cursor: progress.cursor, attempt, nextAttemptAt: retryAt, firstAttemptAt }
          : outcome === "gone"
          ? { cursor: progress.cursor, attempt, nextAttemptAt: undefined, firstAttemptAt }
          : settled(event)
        yield* repository.recordAttempt(webhook.id, owner, {
          ...result,
          ...(outcome === "given_up"
            ? { outcome, error: `${result.error ?? "failed"}; given up: retried for 24 hours`.slice(0, DELIVERY_ERROR_MAX_LENGTH) }
            : {}),
          eventId: event.id,
          attempt,
          attemptedAt
        }, progress)
        deliveries[outcome].updateUnsafe(1, registryContext)
        if (outcome === "gone") {
          yield* repository.disable(webhook.id, goneReason(result), failedAt)
          return
        }
        if (outcome === "retry") return
      }
    }
  }).pipe(
    Effect.catchTag("WebhookNotFound", () => Effect.void),
    Effect.catchTag("WebhookLeaseLost", (error) => Effect.logInfo(`webhook delivery: ${error.message}`)),
    // Work, so a trace of its own (each attempt's span links to the change it delivers),
    // though the loop that claimed it records none.
    Effect.withSpan("WebhookDispatcher.deliverTo", {
      attributes: { "webhook.id": String(target.webhook.id) },
      root: true
    }, { captureStackTrace: false }),
    Effect.withTracerEnabled(true)
  )

// Why a `gone` attempt disabled its subscription: the receiver's 410, or a URL refused at delivery.
const goneReason = (result: AttemptResult): string =>
  result.httpStatus === 410
    ? "the receiver answered 410 Gone"
    : `the URL is refused: ${result.error ?? "not allowed"}`.slice(0, DELIVERY_ERROR_MAX_LENGTH)

/**
 * The age of the oldest event each active subscription still has to receive, the
 * oldest of them all (0 when none waits), into the gauge. Only a subscription with an
 * event of its types after its cursor (EventLog.heads) costs a read of the log: an idle
 * instance's sample is two statements, whatever the number of subscriptions.
 */
export const sampleBacklog = Effect.gen(function*() {
  const log = yield* EventLog
  const repository = yield* WebhookRepository
  const at = yield* now
  const heads = yield* log.heads
  let oldest: DateTime.Utc | undefined
  for (const { progress, webhook } of yield* repository.pending) {
    if (lastOfTypes(webhook.types, heads.latest) <= progress.cursor) continue
    const [event] = yield* log.page({ after: progress.cursor, limit: 1, types: webhook.types })
    if (event === undefined) continue
    const since = DateTime.max(event.occurredAt, webhook.createdAt)
    if (oldest === undefined || DateTime.isLessThan(since, oldest)) oldest = since
  }
  const age = oldest === undefined ? 0 : Math.max(0, (DateTime.toEpochMillis(at) - DateTime.toEpochMillis(oldest)) / 1000)
  yield* Metric.update(oldestAge, age)
})

/**
 * Runs the dispatcher while the layer lives: woken by the event log's `appended` signal
 * and by a poll, it claims as many due subscriptions as it has free slots and delivers
 * to each in a fiber of its own. Closing the layer interrupts the deliveries under way
 * (an interrupted one is not recorded, so it is tried again) and releases their leases.
 */
export const layer = (options: Options): Layer.Layer<never, never, EventLog | WebhookRepository | WebhookSender> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const log = yield* EventLog
    const repository = yield* WebhookRepository
    const concurrency = options.concurrency ?? 8
    const poll = Duration.fromInputUnsafe(options.poll ?? Duration.millis(500))
    const lease = Duration.fromInputUnsafe(options.lease ?? Duration.seconds(30))
    const running = yield* FiberSet.make<void, never>()
    const inFlight = new Set<WebhookId>()
    const wake = yield* Queue.sliding<void>(1)
    const services = yield* Effect.context<EventLog | WebhookRepository | WebhookSender>()

    const warn = (error: StoreUnavailable) => Effect.logWarning(`webhook delivery: ${error.message}`)

    const claim = Effect.gen(function*() {
      const free = concurrency - (yield* FiberSet.size(running))
      if (free <= 0) return
      const heads = yield* log.heads
      const at = yield* now
      const until = DateTime.addDuration(at, lease)
      const targets = yield* repository.claim({ now: at, owner: options.owner, until, limit: free, heads: heads.latest })
      for (const target of targets) {
        // Still being delivered to here: its lease ran out while a delivery was under way
        // (a slow receiver, a paused process), and this claim renewed it. The fiber at work
        // goes on; a second one would send the same events again, out of order.
        if (inFlight.has(target.webhook.id)) continue
        inFlight.add(target.webhook.id)
        const release = repository.release(target.webhook.id, options.owner).pipe(
          Effect.catchTag("StoreUnavailable", warn),
          // A store that stops answering at shutdown only delays another instance by the lease.
          Effect.timeoutOption("1 second"),
          Effect.asVoid
        )
        yield* FiberSet.run(
          running,
          deliverTo(target, heads.swept, options.owner, until, lease).pipe(
            Effect.catchTag("StoreUnavailable", warn),
            Effect.ensuring(release),
            Effect.ensuring(Effect.sync(() => inFlight.delete(target.webhook.id))),
            Effect.ensuring(Queue.offer(wake, undefined)),
            Effect.provideContext(services)
          )
        )
      }
    }).pipe(Effect.catchTag("StoreUnavailable", warn))

    // Whether any subscription is active, looked up at each poll: with none, a change wakes
    // no claim (nor its read of the heads), so a store with no subscriptions pays nothing per
    // write. A subscription made since, here or on another instance, is claimed from the
    // next poll on; it starts at the log's end, so that wait loses it no event.
    let active = true
    let pollDue = true
    const pass = Effect.gen(function*() {
      if (pollDue) {
        pollDue = false
        active = yield* repository.anyActive
      }
      if (active) yield* claim
    }).pipe(Effect.catchTag("StoreUnavailable", warn))

    yield* Effect.forkScoped(Stream.runForEach(log.appended, () => Queue.offer(wake, undefined)))
    // The poll is a wake of its own: a change costs the loop no timer, nor a race.
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(
      Effect.sleep(poll),
      Effect.andThen(Effect.sync(() => pollDue = true), Queue.offer(wake, undefined))
    )))
    // The loops record no trace: a pass that finds nothing to do is not worth one, 260,000
    // a day per idle instance. A claimed subscription's deliveries are (deliverTo).
    yield* Effect.forkScoped(Effect.withTracerEnabled(Effect.forever(Effect.andThen(pass, Queue.take(wake))), false))
    yield* Effect.forkScoped(Effect.withTracerEnabled(
      Effect.forever(Effect.andThen(
        sampleBacklog.pipe(Effect.catchTag("StoreUnavailable", warn), Effect.provideContext(services)),
        Effect.sleep(options.sampleEvery ?? Duration.seconds(10))
      )),
      false
    ))
  }))
