import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { EventId } from "../../../domain/events/EventId.ts"
import { AttemptOutcome, DeliveryId } from "../../../domain/webhooks/DeliveryAttempt.ts"
import { WebhookId } from "../../../domain/webhooks/WebhookId.ts"
import { WebhookEventTypes } from "../../../domain/webhooks/WebhookSubscription.ts"
import {
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
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
import { JsonContentType } from "./JsonContentType.ts"
import { jsonInt, jsonInt64, LosslessJsonBody } from "./JsonInt64.ts"
import { DeliveryCursorParam, LimitParam, WebhookIdParam } from "./PathAndQuery.ts"
import { MAX_BODY_VALUES } from "./PetsApi.ts"
import { RequestValidation } from "./RequestValidation.ts"
import { WriteScope } from "./WriteScope.ts"

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
        IdempotencyKeyInUse,
        IdempotencyKeyReused,
        PayloadTooLarge,
        UnsupportedMediaType,
        RateLimited,
        ServiceUnavailable,
        Internal
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
    HttpApiEndpoint.get("listWebhookDeliveries", "/webhooks/:webhookId/deliveries", {
      params: { webhookId: WebhookIdParam },
      query: {
        limit: Schema.optionalKey(LimitParam),
        cursor: Schema.optionalKey(DeliveryCursorParam)
      },
      success: HttpApiSchema.WithHeaders(LosslessJsonBody(DeliveriesJson), {
        link: Schema.optionalKey(Schema.String)
      }),
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
