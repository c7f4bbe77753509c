import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { fromTable } from "../../../src/adapters/memory/events/EventLogMemory.ts"
import { EventTable } from "../../../src/adapters/memory/events/EventTable.ts"
import * as WebhookRepositoryMemory from "../../../src/adapters/memory/webhooks/WebhookRepositoryMemory.ts"
import * as EventRetention from "../../../src/application/events/EventRetention.ts"
import { StoreUnavailable } from "../../../src/domain/Errors.ts"
import { EventId } from "../../../src/domain/events/EventId.ts"
import { EventType } from "../../../src/domain/events/EventType.ts"
import type { DeliveryAttempt } from "../../../src/domain/webhooks/DeliveryAttempt.ts"
import type { WebhookUrl } from "../../../src/domain/webhooks/WebhookUrl.ts"
import { EventLog } from "../../../src/ports/events/EventLog.ts"
import { WebhookRepository } from "../../../src/ports/webhooks/WebhookRepository.ts"

const NOW = DateTime.makeUnsafe("2026-05-10T00:00:00.000Z")
const ago = (days: number, millis = 0) => DateTime.makeUnsafe(DateTime.toEpochMillis(NOW) - days * 86_400_000 - millis)

// A memory repository with one subscription whose attempts were made at `times`, in that order.
const withAttempts = (times: ReadonlyArray<DateTime.Utc>) =>
  Effect.gen(function*() {
    const repository = yield* WebhookRepositoryMemory.make
    const { webhook } = yield* repository.create({
      url: "https://hooks.example.com/in" as WebhookUrl,
      types: ["pet.created"],
      createdAt: ago(30),
      after: 0n
    })
    const heads = new Map(EventType.literals.map((type) => [type, EventId.make(1000n)]))
    yield* repository.claim({ now: NOW, owner: "test", until: DateTime.add(NOW, { minutes: 1 }), limit: 1, heads })
    const attempts: Array<DeliveryAttempt> = []
    for (const [i, attemptedAt] of times.entries()) {
      attempts.push(yield* repository.recordAttempt(webhook.id, "test", {
        eventId: EventId.make(BigInt(i + 1)),
        attempt: 1,
        attemptedAt,
        outcome: "delivered",
        httpStatus: 204,
        durationMs: 1,
        error: undefined
      }, { cursor: EventId.make(BigInt(i + 1)), attempt: 0, nextAttemptAt: undefined }))
    }
    return { repository, webhook, attempts }
  })

describe("EventRetention", () => {
  it.effect("prunes the delivery attempts made before the retention by the Clock, a batch at a time, and keeps the rest", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(NOW))
      const { attempts, repository, webhook } = yield* withAttempts([ago(9), ago(8), ago(7, 1), ago(7), ago(1)])
      const removed = yield* EventRetention.pruneDeliveries({ retention: "7 days", batch: 2 }).pipe(
        Effect.provideService(WebhookRepository, repository)
      )
      assert.strictEqual(removed, 3)
      // One made exactly 7 days ago is kept, as an event is.
      assert.deepStrictEqual(yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 }), attempts.slice(3))
    }))

  it.effect("the retention process prunes the attempts every period with the events, and a sweep the store refuses does not stop the prune", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(NOW))
      const { attempts, repository, webhook } = yield* withAttempts([ago(8), ago(1)])
      let sweeps = 0
      const log = EventLog.of({
        ...fromTable(new EventTable()),
        sweep: () => Effect.sync(() => sweeps++).pipe(Effect.andThen(Effect.fail(new StoreUnavailable({ message: "down" }))))
      })
      yield* Layer.build(EventRetention.layer({ retention: "7 days", every: "1 minute" }).pipe(
        Layer.provide(Layer.succeed(EventLog)(log)),
        Layer.provide(Layer.succeed(WebhookRepository)(repository))
      ))
      assert.strictEqual((yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 })).length, 2)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(sweeps, 1)
      assert.deepStrictEqual(yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 }), attempts.slice(1))
    }))
})
