import { Context, type DateTime, type Duration, type Effect } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { EventId } from "../../domain/events/EventId.ts"
import type { AttemptOutcome, AttemptResult, DeliveryAttempt, DeliveryId } from "../../domain/webhooks/DeliveryAttempt.ts"
import type { WebhookLeaseLost, WebhookNotFound } from "../../domain/webhooks/WebhookErrors.ts"
import type { WebhookId } from "../../domain/webhooks/WebhookId.ts"
import type { WebhookSecret } from "../../domain/webhooks/WebhookSecret.ts"
import type { WebhookSubscription } from "../../domain/webhooks/WebhookSubscription.ts"
import type { WebhookUrl } from "../../domain/webhooks/WebhookUrl.ts"
import type { EventType } from "../../domain/events/EventType.ts"

/** A subscription and the secret just made for it: the only time the secret is shown. */
export interface IssuedWebhook {
  readonly webhook: WebhookSubscription
  readonly secret: WebhookSecret
}

/**
 * Where a subscription's deliveries stand. `cursor` is the last event settled for it
 * (delivered, or given up); the next one is being tried, `attempt` times so far, first at
 * `firstAttemptAt` (the start of its retry window; absent before the first attempt), and
 * is not tried again before `nextAttemptAt` (none: at once).
 */
export interface DeliveryProgress {
  readonly cursor: EventId | 0n
  readonly attempt: number
  readonly nextAttemptAt: DateTime.Utc | undefined
  readonly firstAttemptAt?: DateTime.Utc | undefined
}

/** What a dispatcher needs to deliver to a subscription: where it stands, and the secrets that sign now. */
export interface DeliveryTarget {
  readonly webhook: WebhookSubscription
  /** The current secret first, then the previous one while its overlap lasts. */
  readonly secrets: readonly [WebhookSecret, ...Array<WebhookSecret>]
  readonly progress: DeliveryProgress
}

/**
 * Webhook subscriptions, their signing secrets, where their deliveries stand and the
 * attempts made. Secrets are kept as they are (each delivery is signed with them) and
 * leave the store only to sign: in IssuedWebhook once, in DeliveryTarget, and to `signing`.
 */
export class WebhookRepository extends Context.Service<WebhookRepository, {
  /**
   * Adds an active subscription with a new secret; its deliveries start after event
   * `after`, the log's latest when it was made (EventLog.latest), so a new subscription
   * does not walk the log before its first delivery. A dispatcher also skips the events
   * that occurred before `createdAt` (numbered after `after`, committed before it).
   */
  readonly create: (request: {
    readonly url: WebhookUrl
    readonly types: readonly [EventType, ...Array<EventType>]
    readonly createdAt: DateTime.Utc
    readonly after: EventId | 0n
  }) => Effect.Effect<IssuedWebhook, StoreUnavailable>
  /** Every subscription, active or disabled, ascending by id. */
  readonly list: Effect.Effect<ReadonlyArray<WebhookSubscription>, StoreUnavailable>
  readonly get: (id: WebhookId) => Effect.Effect<WebhookSubscription, WebhookNotFound | StoreUnavailable>
  /** Removes the subscription and its recorded attempts. */
  readonly delete: (id: WebhookId) => Effect.Effect<void, WebhookNotFound | StoreUnavailable>
  /**
   * Makes a new current secret. The one it replaces still signs until `at + overlap`, so
   * a receiver can move to the new one; a secret replaced before that stops at once.
   */
  readonly rotateSecret: (
    id: WebhookId,
    at: DateTime.Utc,
    overlap: Duration.Duration
  ) => Effect.Effect<IssuedWebhook, WebhookNotFound | StoreUnavailable>
  /** Stops deliveries and says why (a 410 answer, an operator); a disabled one stays disabled, with its first reason. */
  readonly disable: (
    id: WebhookId,
    reason: string,
    at: DateTime.Utc
  ) => Effect.Effect<WebhookSubscription, WebhookNotFound | StoreUnavailable>
  /**
   * Resumes the deliveries of a disabled subscription: active again, its reason and time
   * gone. Its cursor stays where it stood, so the first event of its types after the
   * last one settled comes next (the one it stopped at, when it stopped on an event),
   * tried afresh: no tries counted, no retry time, no first attempt (a new 24-hour
   * window). An active subscription stays as it is, the tries of its event under way
   * included.
   */
  readonly enable: (id: WebhookId) => Effect.Effect<WebhookSubscription, WebhookNotFound | StoreUnavailable>
  /**
   * The subscription, active or disabled, and the secrets that sign at `now` (the current
   * one first, then the previous one while its overlap lasts), without leasing it: for a
   * message sent besides its deliveries (a ping), which moves none of its progress.
   */
  readonly signing: (
    id: WebhookId,
    now: DateTime.Utc
  ) => Effect.Effect<Omit<DeliveryTarget, "progress">, WebhookNotFound | StoreUnavailable>
  /**
   * Leases to `owner` until `until`, and answers, at most `limit` of the active
   * subscriptions that have work: an event of one of their types after their cursor (a
   * head above it, from EventLog.heads), their next attempt due at `now`, and no lease
   * holding them at `now` (none, or one that expired). The furthest behind come first
   * (ascending cursor, then id), so no subscription waits behind others for its rank, and
   * a caught-up one is not claimed at all. Instances sharing the store never claim the
   * same subscription at once, so each delivers to it alone while its lease lasts.
   */
  readonly claim: (request: {
    readonly now: DateTime.Utc
    readonly owner: string
    readonly until: DateTime.Utc
    readonly limit: number
    readonly heads: ReadonlyMap<EventType, EventId>
  }) => Effect.Effect<ReadonlyArray<DeliveryTarget>, StoreUnavailable>
  /** Ends `owner`'s lease on the subscription, if it still holds it. */
  readonly release: (id: WebhookId, owner: string) => Effect.Effect<void, StoreUnavailable>
  /**
   * Whether any subscription is active: one cheap look, so that an instance with nothing
   * to deliver to does not claim on every change.
   */
  readonly anyActive: Effect.Effect<boolean, StoreUnavailable>
  /** The active subscriptions and where their deliveries stand, leased or not, ascending by id. */
  readonly pending: Effect.Effect<ReadonlyArray<{ readonly webhook: WebhookSubscription; readonly progress: DeliveryProgress }>, StoreUnavailable>
  /**
   * Records an attempt at delivering `eventId` and moves the subscription's progress,
   * as one change: an attempt is never recorded without the progress it made.
   *
   * Fenced by the lease: it changes nothing, and fails WebhookLeaseLost, unless `owner`
   * still holds the subscription's lease, so an instance that paused past its lease
   * cannot move the cursor back or record over the instance that claimed it since. A
   * lease that expired but that no one has claimed or released since still counts as
   * `owner`'s: no one else has delivered, so its progress is kept rather than the event
   * sent again.
   */
  readonly recordAttempt: (
    id: WebhookId,
    owner: string,
    attempt: Omit<AttemptResult, "outcome"> & {
      readonly outcome: AttemptOutcome
      readonly eventId: EventId
      readonly attempt: number
      readonly attemptedAt: DateTime.Utc
    },
    progress: DeliveryProgress
  ) => Effect.Effect<DeliveryAttempt, WebhookNotFound | WebhookLeaseLost | StoreUnavailable>
  /**
   * Moves the subscription's progress without an attempt: past events it does not
   * receive (before its creation, or of other types), or to a later retry time. Fenced
   * by `owner`'s lease as recordAttempt is.
   */
  readonly advance: (
    id: WebhookId,
    owner: string,
    progress: DeliveryProgress
  ) => Effect.Effect<void, WebhookNotFound | WebhookLeaseLost | StoreUnavailable>
  /** The subscription's attempts with an id greater than `after`, ascending, at most `limit`. */
  readonly deliveries: (
    id: WebhookId,
    page: { readonly after: DeliveryId | 0n; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<DeliveryAttempt>, WebhookNotFound | StoreUnavailable>
  /**
   * Removes up to `limit` of the recorded attempts made before `before` (`attemptedAt`),
   * of every subscription, and answers how many it removed: one bounded statement, to be
   * repeated while it removes a full batch (retention, as EventLog.sweep). The
   * subscriptions, their progress and the attempts made since stay as they are.
   *
   * The SQL stores take the oldest first. The memory store takes each subscription's
   * attempts in the order they were recorded, up to the first one made since `before`:
   * in one process a subscription's attempts are made one after another.
   */
  readonly pruneDeliveries: (query: {
    readonly before: DateTime.Utc
    readonly limit: number
  }) => Effect.Effect<number, StoreUnavailable>
}>()("animal-store/ports/WebhookRepository") {}
