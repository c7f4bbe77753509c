import { DateTime, Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as WebhookRepositoryMemory from "../../../../src/adapters/memory/webhooks/WebhookRepositoryMemory.ts"
import { EventId } from "../../../../src/domain/events/EventId.ts"
import { EventType } from "../../../../src/domain/events/EventType.ts"
import type { DeliveryAttempt, DeliveryId } from "../../../../src/domain/webhooks/DeliveryAttempt.ts"
import type { WebhookUrl } from "../../../../src/domain/webhooks/WebhookUrl.ts"
import { webhookRepositoryContract } from "../../../ports/webhooks/WebhookRepositoryContract.ts"

webhookRepositoryContract("memory", WebhookRepositoryMemory.layer)

describe("WebhookRepositoryMemory deliveries", () => {
  it("pages a subscription with 200,000 attempts, among another's, correctly from any cursor, before and after a prune", () => {
    const repository = Effect.runSync(WebhookRepositoryMemory.make)
    const T0 = DateTime.makeUnsafe("2026-05-01T10:00:00.000Z")
    const heads = new Map(EventType.literals.map((type) => [type, EventId.make(1n << 40n)]))
    const create = (path: string) =>
      Effect.runSync(repository.create({ url: `https://hooks.example.com/${path}` as WebhookUrl, types: ["pet.created"], createdAt: T0, after: 0n }))
        .webhook
    const busy = create("busy")
    const other = create("other")
    Effect.runSync(repository.claim({ now: T0, owner: "test", until: DateTime.add(T0, { hours: 1 }), limit: 10, heads }))
    const ATTEMPTS = 200_000
    const mine: Array<DeliveryAttempt> = []
    const record = Effect.fnUntraced(function*(id: typeof busy.id, n: number) {
      return yield* repository.recordAttempt(
        id,
        "test",
        {
          eventId: EventId.make(BigInt(n + 1)),
          attempt: 1,
          attemptedAt: DateTime.makeUnsafe(DateTime.toEpochMillis(T0) + n),
          outcome: "delivered",
          httpStatus: 204,
          durationMs: 1,
          error: undefined
        },
        { cursor: EventId.make(BigInt(n + 1)), attempt: 0, nextAttemptAt: undefined }
      )
    })
    Effect.runSync(Effect.gen(function*() {
      for (let n = 0; n < ATTEMPTS; n++) {
        mine.push(yield* record(busy.id, n))
        // Another subscription's attempts between them: its ids are not in this one's pages.
        if (n % 7 === 0) yield* record(other.id, n)
      }
    }))
    const page = (after: bigint, limit: number) =>
      Effect.runSync(repository.deliveries(busy.id, { after: after as DeliveryId | 0n, limit }))

    // Every page, 100 at a time: 2,000 pages, each starting where the previous one ended.
    const seen: Array<DeliveryAttempt> = []
    let after = 0n
    while (true) {
      const got = page(after, 100)
      if (got.length === 0) break
      expect(got.length === 100 || seen.length + got.length === ATTEMPTS).toBe(true)
      seen.push(...got)
      after = got.at(-1)!.id
    }
    expect(seen.length).toBe(ATTEMPTS)
    expect(seen.every((attempt, i) => attempt === mine[i])).toBe(true)

    // From any cursor: an id of its own, an id of the other subscription's, below and above all.
    const expectFrom = (cursor: bigint, limit: number) => {
      const start = mine.findIndex((attempt) => attempt.id > cursor)
      const expected = start === -1 ? [] : mine.slice(start, start + limit)
      expect(page(cursor, limit)).toEqual(expected)
    }
    const others = Effect.runSync(repository.deliveries(other.id, { after: 0n, limit: 1_000_000 }))
    expect(others.length).toBe(Math.ceil(ATTEMPTS / 7))
    for (const cursor of [0n, 1n, mine[0]!.id, mine[12_345]!.id, mine[ATTEMPTS - 2]!.id, mine.at(-1)!.id, mine.at(-1)!.id + 10n]) {
      expectFrom(cursor, 50)
    }
    for (const cursor of [others[0]!.id, others[9_999]!.id, others.at(-1)!.id]) expectFrom(cursor, 50)

    // Retention removes the first 150,000 of them (and the other's of that time): pages start at what is left.
    const cutoff = DateTime.makeUnsafe(DateTime.toEpochMillis(T0) + 150_000)
    let pruned = 0
    while (true) {
      const removed = Effect.runSync(repository.pruneDeliveries({ before: cutoff, limit: 1000 }))
      pruned += removed
      if (removed < 1000) break
    }
    expect(pruned).toBe(150_000 + Math.ceil(150_000 / 7))
    const left = mine.slice(150_000)
    expect(page(0n, 3)).toEqual(left.slice(0, 3))
    expect(page(mine[100]!.id, 3)).toEqual(left.slice(0, 3))
    expect(page(left[49_000]!.id, 5)).toEqual(left.slice(49_001, 49_006))
    expect(page(left.at(-1)!.id, 5)).toEqual([])
  }, 60_000)
})
