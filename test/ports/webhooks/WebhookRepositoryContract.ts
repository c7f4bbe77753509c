/** The one contract of WebhookRepository, run on every store (memory, embedded, PostgreSQL). */
import { assert, layer } from "@effect/vitest"
import { DateTime, Duration, Effect, type Layer } from "effect"
import { EventId } from "../../../src/domain/events/EventId.ts"
import { EventType } from "../../../src/domain/events/EventType.ts"
import type { DeliveryId } from "../../../src/domain/webhooks/DeliveryAttempt.ts"
import { WebhookLeaseLost } from "../../../src/domain/webhooks/WebhookErrors.ts"
import { WebhookId } from "../../../src/domain/webhooks/WebhookId.ts"
import { secretKey } from "../../../src/domain/webhooks/WebhookSecret.ts"
import type { WebhookUrl } from "../../../src/domain/webhooks/WebhookUrl.ts"
import { WebhookSubscription } from "../../../src/domain/webhooks/WebhookSubscription.ts"
import { WebhookRepository } from "../../../src/ports/webhooks/WebhookRepository.ts"

const at = (iso: string) => DateTime.makeUnsafe(iso)
const T0 = at("2026-05-01T10:00:00.000Z")
const url = (path: string) => `https://hooks.example.com/${path}` as WebhookUrl
const create = (path: string, types: readonly ["pet.created", ...Array<"pet.created" | "order.placed">] = ["pet.created"]) =>
  Effect.flatMap(WebhookRepository, (repository) => repository.create({ url: url(path), types, createdAt: T0, after: 0n }))
// A log whose every type has events far ahead of any cursor here: every subscription has work.
const HEADS: ReadonlyMap<EventType, EventId> = new Map(EventType.literals.map((type) => [type, EventId.make(1n << 40n)]))
const missing = WebhookId.make(9_000_000_000_000n)
// The due subscriptions: claimed, then released at once, so that any later look sees them again.
const due = (now: DateTime.Utc, limit: number) =>
  Effect.flatMap(WebhookRepository, (repository) =>
    Effect.tap(
      repository.claim({ now, owner: "contract", until: DateTime.add(now, { minutes: 1 }), limit, heads: HEADS }),
      (targets) => Effect.forEach(targets, (target) => repository.release(target.webhook.id, "contract"))
    ))
// Leases the subscription (due at `now`) to `owner` until a minute later, as a dispatcher
// does before it writes progress; the claim's other subscriptions are released at once.
const lease = (id: WebhookId, owner = "contract", now = T0) =>
  Effect.flatMap(WebhookRepository, (repository) =>
    Effect.gen(function*() {
      const targets = yield* repository.claim({ now, owner, until: DateTime.add(now, { minutes: 1 }), limit: 1000, heads: HEADS })
      yield* Effect.forEach(targets.filter((target) => target.webhook.id !== id), (target) => repository.release(target.webhook.id, owner))
      assert.include(targets.map((target) => target.webhook.id), id)
    }))
const result = { outcome: "retry", httpStatus: 503, durationMs: 12, error: "503 Service Unavailable" } as const

/** Runs the contract against `repository`; it must start empty. */
export const webhookRepositoryContract = (
  name: string,
  repository: Layer.Layer<WebhookRepository, unknown>,
  options?: { readonly timeout?: number }
) =>
  layer(repository, { timeout: options?.timeout ?? 60_000, excludeTestServices: true })(
    `WebhookRepository contract: ${name}`,
    (it) => {
      // First: it needs the store with no subscription, and leaves it so.
      it.effect("anyActive: only while an active subscription exists (a disabled one does not count)", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          assert.isFalse(yield* repository.anyActive)
          const { webhook } = yield* create("any-active")
          assert.isTrue(yield* repository.anyActive)
          yield* repository.disable(webhook.id, "operator", T0)
          assert.isFalse(yield* repository.anyActive)
          yield* repository.enable(webhook.id)
          assert.isTrue(yield* repository.anyActive)
          yield* repository.delete(webhook.id)
          assert.isFalse(yield* repository.anyActive)
        }))

      it.effect("a subscription round-trips, active, with a well-formed secret shown at creation", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook, secret } = yield* repository.create({
            url: url("round-trip?x=1"),
            types: ["order.placed", "pet.deleted"],
            createdAt: at("2026-03-04T05:06:07.089Z"),
            after: 0n
          })
          assert.isDefined(secretKey(secret))
          assert.strictEqual(secretKey(secret)!.length, 32)
          const stored = yield* repository.get(webhook.id)
          assert.deepStrictEqual(stored, webhook)
          assert.strictEqual(stored.url, url("round-trip?x=1"))
          assert.deepStrictEqual(stored.types, ["order.placed", "pet.deleted"])
          assert.strictEqual(DateTime.formatIso(stored.createdAt), "2026-03-04T05:06:07.089Z")
          assert.deepStrictEqual(stored.state, { _tag: "active" })
          // The secret leaves the store only to sign: a subscription does not carry it.
          assert.deepStrictEqual(Object.keys(stored).sort(), ["createdAt", "id", "state", "types", "url"])
          const target = (yield* due(T0, 100)).find((due) => due.webhook.id === webhook.id)
          assert.deepStrictEqual(target?.secrets, [secret])
          assert.deepStrictEqual(target?.progress, { cursor: 0n, attempt: 0, nextAttemptAt: undefined })
        }))

      it.effect("ids grow, secrets differ, and list shows every subscription by id", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const first = yield* create("a")
          const second = yield* create("b")
          assert.isTrue(second.webhook.id > first.webhook.id)
          assert.notStrictEqual(first.secret, second.secret)
          const ids = (yield* repository.list).map((webhook) => webhook.id)
          assert.deepStrictEqual(ids, [...ids].sort((a, b) => (a < b ? -1 : 1)))
          assert.includeMembers(ids, [first.webhook.id, second.webhook.id])
        }))

      it.effect("an unknown id is WebhookNotFound for every call that names one", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const calls = [
            repository.get(missing),
            repository.delete(missing),
            repository.rotateSecret(missing, T0, Duration.hours(24)),
            repository.disable(missing, "why", T0),
            repository.enable(missing),
            repository.signing(missing, T0),
            repository.recordAttempt(missing, "contract", { eventId: 1n as EventId, attempt: 1, attemptedAt: T0, ...result }, {
              cursor: 0n,
              attempt: 1,
              nextAttemptAt: undefined
            }),
            repository.deliveries(missing, { after: 0n, limit: 10 })
          ]
          for (const call of calls) {
            const error = yield* Effect.flip(call)
            assert.strictEqual(error._tag, "WebhookNotFound")
          }
        }))

      it.effect("delete removes the subscription and its attempts", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("deleted")
          yield* lease(webhook.id)
          yield* repository.recordAttempt(webhook.id, "contract", { eventId: 1n as EventId, attempt: 1, attemptedAt: T0, ...result }, {
            cursor: 0n,
            attempt: 1,
            nextAttemptAt: undefined
          })
          yield* repository.delete(webhook.id)
          assert.strictEqual((yield* Effect.flip(repository.get(webhook.id)))._tag, "WebhookNotFound")
          assert.strictEqual((yield* Effect.flip(repository.deliveries(webhook.id, { after: 0n, limit: 10 })))._tag, "WebhookNotFound")
          assert.notInclude((yield* repository.list).map((each) => each.id), webhook.id)
        }))

      it.effect("a rotation signs with both secrets during the overlap, then with the new one only", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { secret: first, webhook } = yield* create("rotated")
          const rotatedAt = at("2026-05-01T12:00:00.000Z")
          const rotated = yield* repository.rotateSecret(webhook.id, rotatedAt, Duration.hours(24))
          assert.notStrictEqual(rotated.secret, first)
          assert.isDefined(secretKey(rotated.secret))
          assert.deepStrictEqual(rotated.webhook, webhook)
          const secretsAt = (iso: string) =>
            Effect.map(due(at(iso), 1000), (due) => due.find((target) => target.webhook.id === webhook.id)?.secrets)
          assert.deepStrictEqual(yield* secretsAt("2026-05-02T11:59:59.999Z"), [rotated.secret, first])
          assert.deepStrictEqual(yield* secretsAt("2026-05-02T12:00:00.000Z"), [rotated.secret])
          // A second rotation within the overlap: the secret replaced first stops at once.
          const again = yield* repository.rotateSecret(webhook.id, at("2026-05-01T13:00:00.000Z"), Duration.hours(24))
          assert.deepStrictEqual(yield* secretsAt("2026-05-01T13:00:00.000Z"), [again.secret, rotated.secret])
        }))

      it.effect("disable keeps the first reason and takes the subscription out of the due ones", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("disabled")
          const disabled = yield* repository.disable(webhook.id, "410 Gone from the receiver", T0)
          assert.deepStrictEqual(disabled.state, { _tag: "disabled", reason: "410 Gone from the receiver", disabledAt: T0 })
          const again = yield* repository.disable(webhook.id, "operator", at("2026-05-02T00:00:00.000Z"))
          assert.deepStrictEqual(again.state, disabled.state)
          assert.deepStrictEqual((yield* repository.get(webhook.id)).state, disabled.state)
          assert.notInclude((yield* due(at("2030-01-01T00:00:00.000Z"), 1000)).map((due) => due.webhook.id), webhook.id)
        }))

      it.effect("enable makes a disabled subscription active again, its cursor where it stood, the event after it tried afresh", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* repository.create({ url: url("re-enabled"), types: ["pet.created"], createdAt: T0, after: EventId.make(5n) })
          // Event 6 was tried 3 times from T0; the third answer was a 410, which disabled it.
          yield* lease(webhook.id)
          yield* repository.recordAttempt(
            webhook.id,
            "contract",
            { eventId: EventId.make(6n), attempt: 3, attemptedAt: at("2026-05-01T10:01:00.000Z"), outcome: "gone", httpStatus: 410, durationMs: 4, error: undefined },
            { cursor: EventId.make(5n), attempt: 3, nextAttemptAt: undefined, firstAttemptAt: T0 }
          )
          yield* repository.disable(webhook.id, "the receiver answered 410 Gone", at("2026-05-01T10:01:00.000Z"))
          yield* repository.release(webhook.id, "contract")
          assert.notInclude((yield* due(T0, 1000)).map((target) => target.webhook.id), webhook.id)

          const enabled = yield* repository.enable(webhook.id)
          assert.deepStrictEqual(enabled, new WebhookSubscription({ ...webhook, state: { _tag: "active" } }))
          assert.deepStrictEqual(yield* repository.get(webhook.id), enabled)
          const pending = (yield* repository.pending).find((entry) => entry.webhook.id === webhook.id)
          assert.deepStrictEqual(pending?.progress, { cursor: EventId.make(5n), attempt: 0, nextAttemptAt: undefined })
          const target = (yield* due(T0, 1000)).find((target) => target.webhook.id === webhook.id)
          assert.deepStrictEqual(target?.progress, { cursor: EventId.make(5n), attempt: 0, nextAttemptAt: undefined })
          // Its attempts are kept; disabled again, it has the new reason.
          assert.strictEqual((yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 })).length, 1)
          const again = yield* repository.disable(webhook.id, "operator", at("2026-05-02T00:00:00.000Z"))
          assert.deepStrictEqual(again.state, { _tag: "disabled", reason: "operator", disabledAt: at("2026-05-02T00:00:00.000Z") })
        }))

      it.effect("enable leaves an active subscription as it is, the tries of its event under way included", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("already-active")
          const progress = { cursor: EventId.make(3n), attempt: 2, nextAttemptAt: at("2026-05-01T10:01:00.000Z"), firstAttemptAt: T0 }
          yield* lease(webhook.id)
          yield* repository.advance(webhook.id, "contract", progress)
          yield* repository.release(webhook.id, "contract")
          assert.deepStrictEqual(yield* repository.enable(webhook.id), webhook)
          assert.deepStrictEqual((yield* repository.pending).find((entry) => entry.webhook.id === webhook.id)?.progress, progress)
        }))

      it.effect("signing gives the secrets that sign now, for an active or a disabled subscription, and leases nothing", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { secret: first, webhook } = yield* create("signing")
          assert.deepStrictEqual(yield* repository.signing(webhook.id, T0), { webhook, secrets: [first] })
          const rotated = yield* repository.rotateSecret(webhook.id, T0, Duration.hours(24))
          assert.deepStrictEqual((yield* repository.signing(webhook.id, at("2026-05-02T09:59:59.999Z"))).secrets, [rotated.secret, first])
          assert.deepStrictEqual((yield* repository.signing(webhook.id, at("2026-05-02T10:00:00.000Z"))).secrets, [rotated.secret])
          const disabled = yield* repository.disable(webhook.id, "410", T0)
          assert.deepStrictEqual(yield* repository.signing(webhook.id, T0), { webhook: disabled, secrets: [rotated.secret, first] })
          yield* repository.enable(webhook.id)
          // No lease was taken: another owner claims it at once.
          const claimed = yield* repository.claim({ now: T0, owner: "other", until: DateTime.add(T0, { minutes: 1 }), limit: 1000, heads: HEADS })
          assert.include(claimed.map((target) => target.webhook.id), webhook.id)
          yield* Effect.forEach(claimed, (target) => repository.release(target.webhook.id, "other"))
        }))

      it.effect("an attempt is recorded with the progress it made; due follows the next attempt's time", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("progress")
          const retryAt = at("2026-05-01T10:00:30.000Z")
          yield* lease(webhook.id)
          const first = yield* repository.recordAttempt(
            webhook.id,
            "contract",
            { eventId: 7n as EventId, attempt: 1, attemptedAt: T0, ...result },
            { cursor: 6n as EventId, attempt: 1, nextAttemptAt: retryAt }
          )
          assert.strictEqual(first.webhookId, webhook.id)
          assert.strictEqual(first.eventId, 7n)
          assert.strictEqual(first.attempt, 1)
          assert.strictEqual(first.outcome, "retry")
          assert.strictEqual(first.httpStatus, 503)
          assert.strictEqual(first.durationMs, 12)
          assert.strictEqual(first.error, "503 Service Unavailable")
          yield* repository.release(webhook.id, "contract")
          const dueIds = (now: DateTime.Utc) => Effect.map(due(now, 1000), (due) => due.map((target) => target.webhook.id))
          assert.notInclude(yield* dueIds(at("2026-05-01T10:00:29.999Z")), webhook.id)
          assert.include(yield* dueIds(retryAt), webhook.id)
          const target = (yield* due(retryAt, 1000)).find((due) => due.webhook.id === webhook.id)
          assert.deepStrictEqual(target?.progress, { cursor: 6n as EventId, attempt: 1, nextAttemptAt: retryAt })

          yield* lease(webhook.id, "contract", retryAt)
          const delivered = yield* repository.recordAttempt(
            webhook.id,
            "contract",
            { eventId: 7n as EventId, attempt: 2, attemptedAt: retryAt, outcome: "delivered", httpStatus: 204, durationMs: 3, error: undefined },
            { cursor: 7n as EventId, attempt: 0, nextAttemptAt: undefined }
          )
          assert.isTrue(delivered.id > first.id)
          assert.strictEqual(delivered.httpStatus, 204)
          assert.isUndefined(delivered.error)
          yield* repository.release(webhook.id, "contract")
          const after = (yield* due(retryAt, 1000)).find((due) => due.webhook.id === webhook.id)
          assert.deepStrictEqual(after?.progress, { cursor: 7n as EventId, attempt: 0, nextAttemptAt: undefined })
          assert.deepStrictEqual(yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 }), [first, delivered])
        }))

      it.effect("advance moves the progress without recording an attempt", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("advanced")
          const later = at("2026-05-01T11:00:00.000Z")
          yield* lease(webhook.id)
          yield* repository.advance(webhook.id, "contract", { cursor: 41n as EventId, attempt: 0, nextAttemptAt: later })
          yield* repository.release(webhook.id, "contract")
          assert.notInclude((yield* due(T0, 1000)).map((due) => due.webhook.id), webhook.id)
          const target = (yield* due(later, 1000)).find((due) => due.webhook.id === webhook.id)
          assert.deepStrictEqual(target?.progress, { cursor: 41n as EventId, attempt: 0, nextAttemptAt: later })
          assert.deepStrictEqual(yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 }), [])
          const error = yield* Effect.flip(repository.advance(missing, "contract", { cursor: 0n, attempt: 0, nextAttemptAt: undefined }))
          assert.strictEqual(error._tag, "WebhookNotFound")
        }))

      it.effect("deliveries are keyset pages of one subscription's attempts", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("paged")
          const { webhook: other } = yield* create("other")
          yield* lease(webhook.id)
          yield* lease(other.id)
          const record = (id: WebhookId, eventId: bigint) =>
            repository.recordAttempt(
              id,
              "contract",
              { eventId: eventId as EventId, attempt: 1, attemptedAt: T0, outcome: "delivered", httpStatus: 200, durationMs: 1, error: undefined },
              { cursor: eventId as EventId, attempt: 0, nextAttemptAt: undefined }
            )
          const mine = []
          for (const eventId of [1n, 2n, 3n, 4n, 5n]) {
            mine.push(yield* record(webhook.id, eventId))
            yield* record(other.id, eventId)
          }
          const first = yield* repository.deliveries(webhook.id, { after: 0n, limit: 2 })
          assert.deepStrictEqual(first.map((attempt) => attempt.eventId), [1n, 2n])
          const second = yield* repository.deliveries(webhook.id, { after: first[1]!.id, limit: 2 })
          assert.deepStrictEqual(second.map((attempt) => attempt.eventId), [3n, 4n])
          const last = yield* repository.deliveries(webhook.id, { after: second[1]!.id, limit: 2 })
          assert.deepStrictEqual(last, [mine[4]!])
          assert.deepStrictEqual(yield* repository.deliveries(webhook.id, { after: last[0]!.id as DeliveryId, limit: 2 }), [])
          yield* repository.release(webhook.id, "contract")
          yield* repository.release(other.id, "contract")
        }))

      it.effect("pruneDeliveries removes the attempts made before the cutoff, a bounded batch at a time; recent ones and the progress stay", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          // Older than every other attempt of this contract (recorded from T0 on), so that the counts are exact.
          const cutoff = at("2025-06-01T00:00:00.000Z")
          const old = (second: number) => at(`2025-01-01T00:00:${String(second).padStart(2, "0")}.000Z`)
          const { webhook: first } = yield* create("pruned-a")
          const { webhook: second } = yield* create("pruned-b")
          yield* lease(first.id)
          yield* lease(second.id)
          const record = (id: WebhookId, eventId: bigint, attemptedAt: DateTime.Utc) =>
            repository.recordAttempt(
              id,
              "contract",
              { eventId: eventId as EventId, attempt: 1, attemptedAt, ...result },
              { cursor: eventId as EventId, attempt: 0, nextAttemptAt: undefined }
            )
          // Five old attempts of the first, three of the second, made in turn; then, for each, one at
          // the cutoff itself and recent ones.
          const prunedFirst = []
          for (let i = 0; i < 5; i++) {
            prunedFirst.push(yield* record(first.id, BigInt(i + 1), old(2 * i)))
            if (i < 3) yield* record(second.id, BigInt(i + 1), old(2 * i + 1))
          }
          const keptFirst = [
            yield* record(first.id, 6n, cutoff),
            yield* record(first.id, 7n, at("2025-12-01T00:00:00.000Z"))
          ]
          const keptSecond = [yield* record(second.id, 4n, at("2025-12-01T00:00:01.000Z"))]
          // The progress the last attempt left, and one set since.
          const progress = { cursor: 7n as EventId, attempt: 2, nextAttemptAt: at("2026-05-01T10:05:00.000Z"), firstAttemptAt: T0 }
          yield* repository.advance(first.id, "contract", progress)
          yield* repository.release(first.id, "contract")
          yield* repository.release(second.id, "contract")
          const progressOf = (id: WebhookId) =>
            Effect.map(repository.pending, (pending) => pending.find((entry) => entry.webhook.id === id)?.progress)
          const before = { first: yield* repository.get(first.id), second: yield* repository.get(second.id) }

          const counts = []
          for (let i = 0; i < 4; i++) counts.push(yield* repository.pruneDeliveries({ before: cutoff, limit: 3 }))
          assert.deepStrictEqual(counts, [3, 3, 2, 0])

          assert.deepStrictEqual(yield* repository.deliveries(first.id, { after: 0n, limit: 10 }), keptFirst)
          assert.deepStrictEqual(yield* repository.deliveries(second.id, { after: 0n, limit: 10 }), keptSecond)
          // Pages still start where their cursor says, a pruned attempt's id included.
          assert.deepStrictEqual(yield* repository.deliveries(first.id, { after: prunedFirst[2]!.id, limit: 1 }), [keptFirst[0]!])
          assert.deepStrictEqual(yield* repository.deliveries(first.id, { after: keptFirst[0]!.id, limit: 10 }), [keptFirst[1]!])
          // The subscriptions and where their deliveries stand are untouched.
          assert.deepStrictEqual(yield* repository.get(first.id), before.first)
          assert.deepStrictEqual(yield* repository.get(second.id), before.second)
          assert.deepStrictEqual(yield* progressOf(first.id), progress)
          assert.deepStrictEqual(yield* progressOf(second.id), { cursor: 4n as EventId, attempt: 0, nextAttemptAt: undefined })
          // Nothing before the cutoff is left: the next prune finds nothing.
          assert.strictEqual(yield* repository.pruneDeliveries({ before: cutoff, limit: 1000 }), 0)
        }))

      it.effect("a claim leases: another owner does not get the subscription until the lease ends or is released", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("leased")
          const until = at("2026-05-01T10:00:30.000Z")
          const claimed = (owner: string, now: DateTime.Utc) =>
            Effect.map(
              repository.claim({ now, owner, until: DateTime.add(now, { seconds: 30 }), limit: 1000, heads: HEADS }),
              (targets) => targets.map((target) => target.webhook.id).includes(webhook.id)
            )
          assert.isTrue(yield* Effect.map(
            repository.claim({ now: T0, owner: "a", until, limit: 1000, heads: HEADS }),
            (targets) => targets.map((target) => target.webhook.id).includes(webhook.id)
          ))
          assert.isFalse(yield* claimed("b", at("2026-05-01T10:00:29.999Z")))
          // Only the holder's release ends it.
          yield* repository.release(webhook.id, "b")
          assert.isFalse(yield* claimed("b", at("2026-05-01T10:00:29.999Z")))
          yield* repository.release(webhook.id, "a")
          assert.isTrue(yield* claimed("b", at("2026-05-01T10:00:29.999Z")))
          // b's lease (to 10:00:59.999) expires: a killed holder does not keep it.
          assert.isFalse(yield* claimed("a", at("2026-05-01T10:00:59.998Z")))
          assert.isTrue(yield* claimed("a", at("2026-05-01T10:00:59.999Z")))
          yield* repository.release(webhook.id, "a")
        }))

      it.effect("progress writes are fenced: once another owner claims, the old holder's recordAttempt and advance fail WebhookLeaseLost and change nothing", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("fenced")
          // a's lease ends at 10:01; a pauses past it, and b claims.
          yield* lease(webhook.id, "a")
          const taken = at("2026-05-01T10:01:00.000Z")
          yield* lease(webhook.id, "b", taken)
          const mine = yield* repository.recordAttempt(
            webhook.id,
            "b",
            { eventId: 5n as EventId, attempt: 1, attemptedAt: taken, outcome: "delivered", httpStatus: 204, durationMs: 2, error: undefined },
            { cursor: 5n as EventId, attempt: 0, nextAttemptAt: undefined }
          )
          const stale = yield* Effect.flip(repository.recordAttempt(
            webhook.id,
            "a",
            { eventId: 5n as EventId, attempt: 1, attemptedAt: T0, ...result },
            { cursor: 4n as EventId, attempt: 1, nextAttemptAt: at("2026-05-01T10:02:00.000Z"), firstAttemptAt: T0 }
          ))
          assert.strictEqual(stale._tag, "WebhookLeaseLost")
          assert.deepStrictEqual(stale, new WebhookLeaseLost({ id: webhook.id, owner: "a" }))
          const back = yield* Effect.flip(repository.advance(webhook.id, "a", { cursor: 0n, attempt: 0, nextAttemptAt: undefined }))
          assert.strictEqual(back._tag, "WebhookLeaseLost")
          // b's progress and attempt stand, and b goes on writing.
          const progressOf = Effect.map(repository.pending, (pending) => pending.find((entry) => entry.webhook.id === webhook.id)?.progress)
          assert.deepStrictEqual(yield* progressOf, { cursor: 5n as EventId, attempt: 0, nextAttemptAt: undefined })
          assert.deepStrictEqual(yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 }), [mine])
          yield* repository.advance(webhook.id, "b", { cursor: 6n as EventId, attempt: 0, nextAttemptAt: undefined })
          assert.deepStrictEqual(yield* progressOf, { cursor: 6n as EventId, attempt: 0, nextAttemptAt: undefined })
          yield* repository.release(webhook.id, "b")
        }))

      it.effect("a lease past its end that no one took still lets its owner write; once released it does not", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("expired-lease")
          // a's lease (to 10:01, long past) was claimed by no one since.
          yield* lease(webhook.id, "a")
          yield* repository.advance(webhook.id, "a", { cursor: 3n as EventId, attempt: 0, nextAttemptAt: undefined })
          yield* repository.recordAttempt(
            webhook.id,
            "a",
            { eventId: 4n as EventId, attempt: 1, attemptedAt: T0, outcome: "delivered", httpStatus: 204, durationMs: 2, error: undefined },
            { cursor: 4n as EventId, attempt: 0, nextAttemptAt: undefined }
          )
          yield* repository.release(webhook.id, "a")
          const after = yield* Effect.flip(repository.advance(webhook.id, "a", { cursor: 0n, attempt: 0, nextAttemptAt: undefined }))
          assert.strictEqual(after._tag, "WebhookLeaseLost")
          const progress = (yield* repository.pending).find((entry) => entry.webhook.id === webhook.id)?.progress
          assert.deepStrictEqual(progress, { cursor: 4n as EventId, attempt: 0, nextAttemptAt: undefined })
          assert.strictEqual((yield* repository.deliveries(webhook.id, { after: 0n, limit: 10 })).length, 1)
        }))

      it.effect("the first attempt's time is kept with the progress; pending lists the active ones with theirs", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* create("first-attempt")
          const progress = { cursor: 3n as EventId, attempt: 2, nextAttemptAt: at("2026-05-01T10:01:00.000Z"), firstAttemptAt: T0 }
          yield* lease(webhook.id)
          yield* repository.advance(webhook.id, "contract", progress)
          yield* repository.release(webhook.id, "contract")
          const pending = (yield* repository.pending).find((entry) => entry.webhook.id === webhook.id)
          assert.deepStrictEqual(pending?.progress, progress)
          yield* repository.disable(webhook.id, "done", T0)
          assert.notInclude((yield* repository.pending).map((entry) => entry.webhook.id), webhook.id)
        }))

      it.effect("a new subscription starts after the event it is made at", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* repository.create({ url: url("starts-late"), types: ["pet.created"], createdAt: T0, after: EventId.make(1234n) })
          const pending = (yield* repository.pending).find((entry) => entry.webhook.id === webhook.id)
          assert.deepStrictEqual(pending?.progress, { cursor: EventId.make(1234n), attempt: 0, nextAttemptAt: undefined })
        }))

      it.effect("a claim takes only the subscriptions with an event of their types after their cursor", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const { webhook } = yield* repository.create({ url: url("has-work"), types: ["order.delivered", "order.cancelled"], createdAt: T0, after: EventId.make(10n) })
          const claims = (heads: ReadonlyArray<readonly [EventType, bigint]>) =>
            Effect.map(
              repository.claim({
                now: T0,
                owner: "has-work",
                until: DateTime.add(T0, { minutes: 1 }),
                limit: 1000,
                heads: new Map(heads.map(([type, id]) => [type, EventId.make(id)]))
              }),
              (targets) => targets.map((target) => target.webhook.id)
            )
          const release = repository.release(webhook.id, "has-work")
          // No event of its types at all; others far ahead; its types at or below its cursor.
          assert.notInclude(yield* claims([]), webhook.id)
          assert.notInclude(yield* claims([["pet.created", 1000n], ["order.placed", 999n]]), webhook.id)
          assert.notInclude(yield* claims([["order.delivered", 10n], ["order.cancelled", 3n], ["pet.created", 1000n]]), webhook.id)
          // One of its types ahead of its cursor.
          assert.include(yield* claims([["order.delivered", 10n], ["order.cancelled", 11n]]), webhook.id)
          yield* release
          assert.include(yield* claims([["order.delivered", 11n]]), webhook.id)
          yield* release
        }))

      it.effect("a claim takes the furthest behind first, whatever their ids", () =>
        Effect.gen(function*() {
          const repository = yield* WebhookRepository
          const made = yield* Effect.forEach([30n, 10n, 20n], (after) =>
            repository.create({ url: url(`behind-${after}`), types: ["order.approved"], createdAt: T0, after: EventId.make(after) }))
          const heads = new Map([["order.approved", EventId.make(31n)] as const])
          const first = yield* repository.claim({ now: T0, owner: "behind", until: DateTime.add(T0, { minutes: 1 }), limit: 1, heads })
          assert.deepStrictEqual(first.map((target) => target.progress.cursor), [10n])
          const rest = yield* repository.claim({ now: T0, owner: "behind", until: DateTime.add(T0, { minutes: 1 }), limit: 1000, heads })
          assert.deepStrictEqual(
            rest.filter((target) => made.some(({ webhook }) => webhook.id === target.webhook.id)).map((target) => target.progress.cursor),
            [20n, 30n]
          )
          yield* Effect.forEach([...first, ...rest], (target) => repository.release(target.webhook.id, "behind"))
        }))

      it.effect("a claim returns at most `limit` subscriptions, by id", () =>
        Effect.gen(function*() {
          yield* create("limit-1")
          yield* create("limit-2")
          const claimed = yield* due(T0, 2)
          assert.strictEqual(claimed.length, 2)
          assert.isTrue(claimed[0]!.webhook.id < claimed[1]!.webhook.id)
        }))
    }
  )
