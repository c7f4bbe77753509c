import { DateTime, Effect, Layer } from "effect"
import { issueSecret } from "../../../application/webhooks/SecretIssuer.ts"
import { DeliveryAttempt, type DeliveryId } from "../../../domain/webhooks/DeliveryAttempt.ts"
import { WebhookLeaseLost, WebhookNotFound } from "../../../domain/webhooks/WebhookErrors.ts"
import type { WebhookId } from "../../../domain/webhooks/WebhookId.ts"
import type { WebhookSecret } from "../../../domain/webhooks/WebhookSecret.ts"
import { WebhookSubscription } from "../../../domain/webhooks/WebhookSubscription.ts"
import { type DeliveryProgress, WebhookRepository } from "../../../ports/webhooks/WebhookRepository.ts"
import * as Spans from "../../observability/Spans.ts"
import { IdOrdered } from "../IdOrdered.ts"

interface Entry {
  webhook: WebhookSubscription
  secret: WebhookSecret
  previous: { readonly secret: WebhookSecret; readonly until: DateTime.Utc } | undefined
  progress: DeliveryProgress
  lease: { readonly owner: string; readonly until: DateTime.Utc } | undefined
  // By id, as recorded: a page starts with a binary search, whatever the number of
  // attempts before it; retention removes them from the front.
  readonly attempts: IdOrdered<DeliveryAttempt>
}

// The furthest behind first, then by id (the claim's order).
const byCursorThenId = (a: Entry, b: Entry): number =>
  a.progress.cursor !== b.progress.cursor
    ? (a.progress.cursor < b.progress.cursor ? -1 : 1)
    : a.webhook.id < b.webhook.id ? -1 : a.webhook.id > b.webhook.id ? 1 : 0

/**
 * Webhook subscriptions in process memory: nothing survives a restart. Each method body
 * runs synchronously inside one Effect step, so each is atomic.
 */
export const make = Effect.sync(() => {
  const entries = new Map<WebhookId, Entry>()
  let lastId = 0n
  let lastDeliveryId = 0n
  const find = (id: WebhookId) =>
    Effect.suspend(() => {
      const entry = entries.get(id)
      return entry === undefined ? Effect.fail(new WebhookNotFound({ id })) : Effect.succeed(entry)
    })
  const signing = (entry: Entry, now: DateTime.Utc): readonly [WebhookSecret, ...Array<WebhookSecret>] =>
    entry.previous !== undefined && DateTime.isLessThan(now, entry.previous.until)
      ? [entry.secret, entry.previous.secret]
      : [entry.secret]
  // The subscription, if `owner` still holds its lease (expired or not: see the port).
  const held = (id: WebhookId, owner: string) =>
    Effect.flatMap(find(id), (entry) =>
      entry.lease?.owner === owner ? Effect.succeed(entry) : Effect.fail(new WebhookLeaseLost({ id, owner })))

  return WebhookRepository.of({
    create: Spans.method("WebhookRepository.create", (request) =>
      Effect.sync(() => {
        const webhook = new WebhookSubscription({
          id: ++lastId as WebhookId,
          url: request.url,
          types: request.types,
          createdAt: request.createdAt,
          state: { _tag: "active" }
        }, { disableChecks: true })
        const secret = issueSecret()
        entries.set(webhook.id, {
          webhook,
          secret,
          previous: undefined,
          progress: { cursor: request.after, attempt: 0, nextAttemptAt: undefined },
          lease: undefined,
          attempts: new IdOrdered()
        })
        return { webhook, secret }
      })
    ),
    list: Effect.sync(() => [...entries.values()].map((entry) => entry.webhook)).pipe(
      Spans.span("WebhookRepository.list")
    ),
    get: Spans.method("WebhookRepository.get", (id: WebhookId) => Effect.map(find(id), (entry) => entry.webhook)),
    delete: Spans.method("WebhookRepository.delete", (id: WebhookId) =>
      Effect.map(find(id), () => void entries.delete(id))
    ),
    rotateSecret: Spans.method("WebhookRepository.rotateSecret", (id, at, overlap) =>
      Effect.map(find(id), (entry) => {
        entry.previous = { secret: entry.secret, until: DateTime.addDuration(at, overlap) }
        entry.secret = issueSecret()
        return { webhook: entry.webhook, secret: entry.secret }
      })
    ),
    disable: Spans.method("WebhookRepository.disable", (id, reason, at) =>
      Effect.map(find(id), (entry) => {
        if (entry.webhook.state._tag === "active") {
          entry.webhook = new WebhookSubscription({
            ...entry.webhook,
            state: { _tag: "disabled", reason, disabledAt: at }
          }, { disableChecks: true })
        }
        return entry.webhook
      })
    ),
    enable: Spans.method("WebhookRepository.enable", (id: WebhookId) =>
      Effect.map(find(id), (entry) => {
        if (entry.webhook.state._tag === "disabled") {
          entry.webhook = new WebhookSubscription({ ...entry.webhook, state: { _tag: "active" } }, { disableChecks: true })
          // The cursor stays; the event after it is tried afresh.
          entry.progress = { cursor: entry.progress.cursor, attempt: 0, nextAttemptAt: undefined }
        }
        return entry.webhook
      })
    ),
    signing: Spans.method("WebhookRepository.signing", (id: WebhookId, now: DateTime.Utc) =>
      Effect.map(find(id), (entry) => ({ webhook: entry.webhook, secrets: signing(entry, now) }))
    ),
    claim: Spans.method("WebhookRepository.claim", ({ heads, limit, now, owner, until }) =>
      Effect.sync(() =>
        [...entries.values()]
          .filter((entry) =>
            entry.webhook.state._tag === "active" &&
            entry.webhook.types.some((type) => (heads.get(type) ?? 0n) > entry.progress.cursor) &&
            (entry.progress.nextAttemptAt === undefined || DateTime.isLessThanOrEqualTo(entry.progress.nextAttemptAt, now)) &&
            (entry.lease === undefined || DateTime.isLessThanOrEqualTo(entry.lease.until, now))
          )
          .sort((a, b) => byCursorThenId(a, b))
          .slice(0, limit)
          .map((entry) => {
            entry.lease = { owner, until }
            return { webhook: entry.webhook, secrets: signing(entry, now), progress: entry.progress }
          })
      )
    ),
    release: Spans.method("WebhookRepository.release", (id, owner) =>
      Effect.sync(() => {
        const entry = entries.get(id)
        if (entry?.lease?.owner === owner) entry.lease = undefined
      })
    ),
    anyActive: Effect.sync(() => {
      for (const entry of entries.values()) if (entry.webhook.state._tag === "active") return true
      return false
    }).pipe(Spans.span("WebhookRepository.anyActive")),
    pending: Effect.sync(() =>
      [...entries.values()]
        .filter((entry) => entry.webhook.state._tag === "active")
        .map((entry) => ({ webhook: entry.webhook, progress: entry.progress }))
    ).pipe(Spans.span("WebhookRepository.pending")),
    recordAttempt: Spans.method("WebhookRepository.recordAttempt", (id, owner, attempt, progress) =>
      Effect.map(held(id, owner), (entry) => {
        const recorded = new DeliveryAttempt({
          id: ++lastDeliveryId as DeliveryId,
          webhookId: id,
          ...attempt
        }, { disableChecks: true })
        entry.attempts.add(recorded)
        entry.progress = progress
        return recorded
      })
    ),
    advance: Spans.method("WebhookRepository.advance", (id, owner, progress) =>
      Effect.map(held(id, owner), (entry) => {
        entry.progress = progress
      })
    ),
    deliveries: Spans.method("WebhookRepository.deliveries", (id, page) =>
      Effect.map(find(id), (entry) => entry.attempts.page(page.after, page.limit))
    ),
    // Each subscription's oldest attempts, up to its first one made since `before`
    // (its attempts are made one after another), `limit` in all.
    pruneDeliveries: Spans.method("WebhookRepository.pruneDeliveries", ({ before, limit }) =>
      Effect.sync(() => {
        let removed = 0
        for (const { attempts } of entries.values()) {
          if (removed >= limit) break
          const oldest = attempts.page(undefined, limit - removed)
          const count = oldest.findIndex((attempt) => !DateTime.isLessThan(attempt.attemptedAt, before))
          const old = count === -1 ? oldest.length : count
          attempts.removeFirst(old)
          removed += old
        }
        return removed
      })
    )
  })
})

/** A WebhookRepository of its own, in memory. */
export const layer: Layer.Layer<WebhookRepository> = Layer.effect(WebhookRepository, make)
