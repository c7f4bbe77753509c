import { Schema } from "effect"
import { EventType } from "../events/EventType.ts"
import { WebhookId } from "./WebhookId.ts"
import { WebhookUrl } from "./WebhookUrl.ts"

/** The event types a subscription receives: at least one, each at most once. */
export const WebhookEventTypes = Schema.NonEmptyArray(EventType).check(
  Schema.makeFilter((types) => new Set(types).size === types.length || "must not repeat a type")
)

/** Longest reason kept for a disabled subscription, in characters. */
export const DISABLED_REASON_MAX_LENGTH = 500

/** Whether deliveries are made: a disabled subscription keeps its record, and why it stopped. */
export const WebhookState = Schema.Union([
  Schema.TaggedStruct("active", {}),
  Schema.TaggedStruct("disabled", {
    reason: Schema.String.check(Schema.isMaxLength(DISABLED_REASON_MAX_LENGTH)),
    disabledAt: Schema.DateTimeUtc
  })
])
/** A value of {@link WebhookState}. */
export type WebhookState = typeof WebhookState.Type

/**
 * A subscription of a URL to some of the store's events. Its signing secrets are not
 * part of it: they are shown once and otherwise read only to sign a delivery.
 */
export class WebhookSubscription extends Schema.Class<WebhookSubscription>("WebhookSubscription")({
  id: WebhookId,
  url: WebhookUrl,
  types: WebhookEventTypes,
  createdAt: Schema.DateTimeUtc,
  state: WebhookState
}) {}
