import { Context, type DateTime, type Effect } from "effect"
import type { InvalidInput, StoreUnavailable } from "../../domain/Errors.ts"
import type { EventType } from "../../domain/events/EventType.ts"
import type { WebhookNotFound } from "../../domain/webhooks/WebhookErrors.ts"
import type { WebhookId } from "../../domain/webhooks/WebhookId.ts"
import type { WebhookSubscription } from "../../domain/webhooks/WebhookSubscription.ts"
import type { IssuedWebhook } from "./WebhookRepository.ts"

/** A secret just rotated in, and until when the one it replaced still signs. */
export interface RotatedWebhook extends IssuedWebhook {
  readonly previousSignsUntil: DateTime.Utc
}

/**
 * Managing webhook subscriptions: what the `animal-store webhooks` command does, on
 * whichever store, in this process or through a running service.
 */
export class WebhookAdmin extends Context.Service<WebhookAdmin, {
  /**
   * Subscribes `url` to `types`, judged by the rules of whoever makes the subscription
   * (the service's, WEBHOOK_ALLOW_PRIVATE included); its deliveries start at the log's
   * end. The secret is shown only here.
   */
  readonly add: (request: {
    readonly url: string
    readonly types: readonly [EventType, ...Array<EventType>]
  }) => Effect.Effect<IssuedWebhook, InvalidInput | StoreUnavailable>
  /** Every subscription, active or disabled, ascending by id (never a secret). */
  readonly list: Effect.Effect<ReadonlyArray<WebhookSubscription>, StoreUnavailable>
  /** Removes the subscription and its delivery attempts; answers what it was. */
  readonly remove: (id: WebhookId) => Effect.Effect<WebhookSubscription, WebhookNotFound | StoreUnavailable>
  /** A new signing secret; the old one still signs for SECRET_ROTATION_OVERLAP. */
  readonly rotate: (id: WebhookId) => Effect.Effect<RotatedWebhook, WebhookNotFound | StoreUnavailable>
}>()("animal-store/ports/WebhookAdmin") {}
