import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { EventId } from "../../../domain/events/EventId.ts"
import { AttemptOutcome, DeliveryId, DeliveryOutcome } from "../../../domain/webhooks/DeliveryAttempt.ts"
import { WebhookId } from "../../../domain/webhooks/WebhookId.ts"
import { WebhookEventTypes } from "../../../domain/webhooks/WebhookSubscription.ts"
import {
  IDEMPOTENT_CREATE_ERRORS,
  Internal,
  InvalidRequest,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServiceUnavailable,
  UnsupportedMediaType
} from "./ApiErrors.ts"
import { Authorization } from "./Authorization.ts"
import { IDEMPOTENCY_DESCRIPTION, IdempotencyKeyHeaders } from "./IdempotencyKeyHeader.ts"
import { JsonContentType, MERGE_PATCH_MEDIA_TYPE } from "./JsonContentType.ts"
import { jsonInt, jsonInt64, LosslessJsonBody } from "./JsonInt64.ts"
import { DeliveryCursorParam, LimitParam, WebhookIdParam } from "./PathAndQuery.ts"
import { MAX_BODY_VALUES } from "./PetsApi.ts"
import { RequestValidation } from "./RequestValidation.ts"
import { WriteScope } from "./WriteScope.ts"
import { patchBody } from "./PatchBody.ts"
import { PageBody } from "./PageBody.ts"

/** A webhook subscription on the wire; its secret is never part of it. */
export const WebhookJson = Schema.Struct({
  id: jsonInt64(WebhookId),
  url: Schema.String,
  types: WebhookEventTypes,
  createdAt: Schema.DateTimeUtcFromString,
  state: Schema.Literals(["active", "disabled"]),
  /** Why deliveries stopped (a 410 answer from the receiver...), when disabled. */
  disabledReason: Schema.optionalKey(Schema.String),
  disabledAt: Schema.optionalKey(Schema.DateTimeUtcFromString)
}).annotate({ identifier: "Webhook" })

/** Many webhook subscriptions. */
export const WebhooksJson = Schema.Array(WebhookJson).annotate({ identifier: "Webhooks" })

/** A subscription with the signing secret just made for it: the only answer that shows a secret. */
export const IssuedWebhookJson = Schema.Struct({
  ...WebhookJson.fields,
  secret: Schema.String.annotate({
    description: "The signing secret (`whsec_` and base64), shown only in this answer: keep it to verify deliveries."
  })
}).annotate({ identifier: "IssuedWebhook" })

/** The createWebhook body. */
export const NewWebhookJson = Schema.Struct({
  url: Schema.String.annotate({ description: "Where deliveries are POSTed: an https URL of a public host." }),
  types: WebhookEventTypes
})

/** The updateWebhook body's fields (RFC 7396). */
export const WebhookPatchFieldsJson = Schema.Struct({
  state: Schema.optionalKey(Schema.Literal("active").annotate({
    description: "`active`: a disabled subscription is active again, its deliveries resumed from its cursor " +
      "(the events after the last one it settled); an active one stays as it is."
  }))
})

/** The updateWebhook body: a JSON object of {@link WebhookPatchFieldsJson}'s fields and no other. */
export const WebhookPatchJson = patchBody(WebhookPatchFieldsJson)

/**
 * What a ping did: the message sent and the receiver's answer, as a delivery attempt
 * would record it. Not recorded: this answer is the only record. No int64 in it, so it
 * travels as plain JSON.
 */
export const WebhookPingJson = Schema.Struct({
  messageId: Schema.String.annotate({ description: "The ping's `webhook-id`: `ping_` and a random UUID, new for every ping." }),
  sentAt: Schema.DateTimeUtcFromString,
  outcome: DeliveryOutcome.annotate({
    description: "What this answer would do to an event: `delivered` (a 2xx), `gone` (a 410, or a URL refused " +
      "at delivery: an event would disable the subscription; a ping does not), `retry` (anything else: an event " +
      "would be tried again)."
  }),
  httpStatus: Schema.optionalKey(Schema.Int),
  durationMs: Schema.Int,
  error: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "WebhookPing" })

/** One recorded attempt at delivering an event to a subscription. */
export const DeliveryJson = Schema.Struct({
  id: jsonInt64(DeliveryId),
  eventId: jsonInt64(EventId),
  attempt: jsonInt(Schema.Int),
  attemptedAt: Schema.DateTimeUtcFromString,
  outcome: AttemptOutcome,
  httpStatus: Schema.optionalKey(jsonInt(Schema.Int)),
  durationMs: jsonInt(Schema.Int),
  error: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "WebhookDelivery" })

/** A page of delivery attempts. */
export const DeliveriesJson = Schema.Array(DeliveryJson).annotate({ identifier: "WebhookDeliveries" })

const READ_ERRORS = [InvalidRequest, NotFound, RateLimited, ServiceUnavailable, Internal] as const

/**
 * Webhook subscriptions: the store POSTs its events to them, signed the Standard Webhooks
 * way. Every operation needs a `write` key: a subscription sends the store's data out.
 */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("createWebhook", "/webhooks", {
      headers: IdempotencyKeyHeaders,
      payload: LosslessJsonBody(NewWebhookJson, { maxValues: MAX_BODY_VALUES }),
      success: HttpApiSchema.WithHeaders(LosslessJsonBody(IssuedWebhookJson).pipe(HttpApiSchema.status(201)), {
        location: Schema.String
      }),
      error: [
        InvalidRequest,
        ...IDEMPOTENT_CREATE_ERRORS
      ]
    }).middleware(JsonContentType)
      // Added after JsonContentType, so it runs before it: 403 comes before any look at the input.
      .middleware(WriteScope)
      .annotateMerge(OpenApi.annotations({
        identifier: "createWebhook",
        summary: "Subscribe a URL to events",
        description: "Subscribes `url` to the event `types`. The URL must be https and its host must not resolve " +
          "to a loopback, private, link-local, shared (CGNAT), unique-local or multicast address (unless the " +
          "service allows private addresses). Answers 201 with the subscription and its signing `secret`, " +
          "shown only here (and in a replay of this answer to the same API key). The URL is checked before the " +
          "`Idempotency-Key` is looked at: a refused URL is a 400 kept for no key. " + IDEMPOTENCY_DESCRIPTION
      })),
    HttpApiEndpoint.get("listWebhooks", "/webhooks", {
      success: LosslessJsonBody(WebhooksJson),
      error: [RateLimited, ServiceUnavailable, Internal]
    }).middleware(WriteScope).annotateMerge(OpenApi.annotations({
      identifier: "listWebhooks",
      summary: "List webhook subscriptions",
      description: "Every subscription, active or disabled, in ascending id order, without secrets."
    })),
    HttpApiEndpoint.get("getWebhook", "/webhooks/:webhookId", {
      params: { webhookId: WebhookIdParam },
      success: LosslessJsonBody(WebhookJson),
      error: READ_ERRORS
    }).middleware(WriteScope).annotateMerge(OpenApi.annotations({
      identifier: "getWebhook",
      summary: "Get a webhook subscription",
      description: "One subscription, without its secret."
    })),
    HttpApiEndpoint.patch("updateWebhook", "/webhooks/:webhookId", {
      params: { webhookId: WebhookIdParam },
      payload: LosslessJsonBody(WebhookPatchJson, { maxValues: MAX_BODY_VALUES, contentType: MERGE_PATCH_MEDIA_TYPE }),
      success: LosslessJsonBody(WebhookJson),
      error: [InvalidRequest, NotFound, PayloadTooLarge, UnsupportedMediaType, RateLimited, ServiceUnavailable, Internal]
    }).middleware(JsonContentType)
      .middleware(WriteScope)
      .annotateMerge(OpenApi.annotations({
        identifier: "updateWebhook",
        summary: "Re-enable a webhook subscription",
        description: "A JSON Merge Patch (RFC 7396, `application/merge-patch+json`; `application/json` is accepted " +
          "too) of `state`, whose one value is `active`: a disabled subscription (a 410 from its receiver, or a URL " +
          "refused at delivery) is active again, without `disabledReason` and `disabledAt`. Its deliveries resume " +
          "from its cursor, not from the log's end: the event it stopped at comes first (tried afresh, a new 24-hour " +
          "window), then every later event of its types still kept (`EVENTS_RETENTION`); those removed meanwhile are " +
          "recorded `given_up`. An active subscription stays as it is; an empty patch changes nothing. Any other " +
          "field is refused (400). Answers 200 with the subscription."
      })),
    HttpApiEndpoint.delete("deleteWebhook", "/webhooks/:webhookId", {
      params: { webhookId: WebhookIdParam },
      success: HttpApiSchema.NoContent,
      error: READ_ERRORS
    }).middleware(WriteScope).annotateMerge(OpenApi.annotations({
      identifier: "deleteWebhook",
      summary: "Delete a webhook subscription",
      description: "Stops deliveries to the subscription and removes it with its recorded attempts. Answers 204."
    })),
    HttpApiEndpoint.post("rotateWebhookSecret", "/webhooks/:webhookId/rotate-secret", {
      params: { webhookId: WebhookIdParam },
      success: LosslessJsonBody(IssuedWebhookJson),
      error: READ_ERRORS
    }).middleware(WriteScope).annotateMerge(OpenApi.annotations({
      identifier: "rotateWebhookSecret",
      summary: "Rotate a webhook's signing secret",
      description: "Makes a new signing secret, shown only in this answer. For 24 hours deliveries carry two " +
        "signatures, one by each secret, so the receiver can move to the new one; then the old one stops."
    })),
    HttpApiEndpoint.post("pingWebhook", "/webhooks/:webhookId/ping", {
      params: { webhookId: WebhookIdParam },
      success: WebhookPingJson,
      error: READ_ERRORS
    }).middleware(WriteScope).annotateMerge(OpenApi.annotations({
      identifier: "pingWebhook",
      summary: "Send a webhook a test ping",
      description: "POSTs `{\"type\": \"ping\", \"timestamp\", \"data\"}` to the subscription's URL now, `data` the " +
        "subscription as `getWebhook` answers it, signed like any delivery (`webhook-id` `ping_<uuid>`, new for every " +
        "ping), active or disabled, and answers 200 with what the receiver answered, within the 5 s a delivery may " +
        "take. A ping changes nothing: not the cursor, not the tries of an event under way, not the state (a 410 to " +
        "a ping disables nothing), and it is not recorded in `listWebhookDeliveries`. A receiver may get it between " +
        "two events."
    })),
    HttpApiEndpoint.get("listWebhookDeliveries", "/webhooks/:webhookId/deliveries", {
      params: { webhookId: WebhookIdParam },
      query: {
        limit: Schema.optionalKey(LimitParam),
        cursor: Schema.optionalKey(DeliveryCursorParam)
      },
      success: PageBody(DeliveriesJson),
      error: READ_ERRORS
    }).middleware(WriteScope).annotateMerge(OpenApi.annotations({
      identifier: "listWebhookDeliveries",
      summary: "List a webhook's delivery attempts",
      description: "The subscription's delivery attempts, oldest first: each event's attempts, their outcome " +
        "(`delivered`, `gone`, `retry`, or `given_up`: the event is left, after 24 hours of retries or because " +
        "retention removed it before it was delivered, `attempt` then counting the tries made, possibly 0), " +
        "the receiver's status and how long they took. When more exist, a " +
        "`Link: <...>; rel=\"next\"` header points at the next page (keyset cursor)."
    }))
  )
  .middleware(RequestValidation)
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "Subscriptions of URLs to the store's events, and their deliveries." }))
{}
