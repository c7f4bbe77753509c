import { Context, type Effect } from "effect"
import type { InvalidInput } from "../../domain/Errors.ts"
import type { AttemptResult } from "../../domain/webhooks/DeliveryAttempt.ts"
import type { WebhookSecret } from "../../domain/webhooks/WebhookSecret.ts"
import type { WebhookUrl } from "../../domain/webhooks/WebhookUrl.ts"

/** One delivery of one message to one subscription. */
export interface WebhookDelivery {
  readonly url: WebhookUrl
  /** The message id (`webhook-id`): the same for every attempt at one event, so receivers can deduplicate. */
  readonly messageId: string
  /** The JSON body, sent as it is and signed. */
  readonly body: string
  /** The secrets that sign now (see WebhookRepository.DeliveryTarget). */
  readonly secrets: ReadonlyArray<WebhookSecret>
}

/**
 * Sends webhook deliveries, and judges a URL before it is subscribed: both refuse a host
 * that resolves to an address the service must not reach (see WebhookAddress).
 */
export class WebhookSender extends Context.Service<WebhookSender, {
  /** The URL in its normal form when it may be subscribed: the URL rules, and each address its host resolves to. */
  readonly check: (url: string) => Effect.Effect<WebhookUrl, InvalidInput>
  /**
   * One attempt, signed, bounded in time; never fails: how it went is the result. A URL
   * refused at delivery (the rules, or an address its host resolves to now) is `gone`,
   * with the reason as its error and no status, so that its subscription is disabled.
   */
  readonly send: (delivery: WebhookDelivery) => Effect.Effect<AttemptResult>
}>()("animal-store/ports/WebhookSender") {}
