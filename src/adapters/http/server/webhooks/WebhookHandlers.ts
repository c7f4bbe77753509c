/** The `webhooks` operations: subscriptions, their secrets, their delivery attempts, and pings. */
import { DateTime, Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { createWebhookIdentity } from "../../../../domain/idempotency/IdempotentRequest.ts"
import { PAGE_LIMIT_DEFAULT } from "../../../../domain/paging/PageLimit.ts"
import type { DeliveryAttempt } from "../../../../domain/webhooks/DeliveryAttempt.ts"
import { SECRET_ROTATION_OVERLAP } from "../../../../domain/webhooks/WebhookSecret.ts"
import type { WebhookSubscription } from "../../../../domain/webhooks/WebhookSubscription.ts"
import { EventLog } from "../../../../ports/events/EventLog.ts"
import { type IssuedWebhook, WebhookRepository } from "../../../../ports/webhooks/WebhookRepository.ts"
import { WebhookSender } from "../../../../ports/webhooks/WebhookSender.ts"
import { Api } from "../../api/Api.ts"
import { cursorOf } from "../../api/PathAndQuery.ts"
import { DeliveryJson, IssuedWebhookJson, WebhookJson, WebhookPingJson } from "../../api/WebhooksApi.ts"
import type { Handlers } from "../routing/ApiRouter.ts"
import { pathOf } from "../routing/EndpointPath.ts"
import { keysetPage } from "../routing/KeysetPage.ts"
import * as Reply from "../routing/Reply.ts"

const { getWebhook, listWebhookDeliveries } = Api.groups.webhooks.endpoints
const webhookPath = pathOf<"webhookId">(getWebhook)
const deliveriesPath = pathOf<"webhookId">(listWebhookDeliveries)
const encodeWebhook = Schema.encodeSync(WebhookJson)
const encodeIssued = Schema.encodeSync(IssuedWebhookJson)
const encodeDelivery = Schema.encodeSync(DeliveryJson)
const encodePing = Schema.encodeSync(WebhookPingJson)

// The wire's flat state: `state`, and why and since when a disabled one stopped.
const wire = (webhook: WebhookSubscription): typeof WebhookJson.Type => ({
  id: webhook.id,
  url: webhook.url,
  types: webhook.types,
  createdAt: webhook.createdAt,
  state: webhook.state._tag,
  ...(webhook.state._tag === "disabled" ? { disabledReason: webhook.state.reason, disabledAt: webhook.state.disabledAt } : {})
})
const webhookJson = (webhook: WebhookSubscription) => JSON.stringify(encodeWebhook(wire(webhook)))
const issuedJson = (issued: IssuedWebhook) => JSON.stringify(encodeIssued({ ...wire(issued.webhook), secret: issued.secret }))
const deliveryJson = (attempt: DeliveryAttempt) =>
  encodeDelivery({
    id: attempt.id,
    eventId: attempt.eventId,
    attempt: attempt.attempt,
    attemptedAt: attempt.attemptedAt,
    outcome: attempt.outcome,
    durationMs: attempt.durationMs,
    ...(attempt.httpStatus === undefined ? {} : { httpStatus: attempt.httpStatus }),
    ...(attempt.error === undefined ? {} : { error: attempt.error })
  })

/** The handlers over the WebhookRepository and WebhookSender in context. */
export const make = Effect.gen(function*() {
  const webhooks = yield* WebhookRepository
  const sender = yield* WebhookSender
  const log = yield* EventLog
  return {
    createWebhook: {
      identity: ({ payload }) => createWebhookIdentity(payload),
      // The URL's rules and its host's addresses, checked before anything is stored and
      // before an Idempotency-Key is looked at: resolving the host holds no transaction.
      prepare: ({ payload }) =>
        Effect.map(sender.check(payload.url), (url) =>
          Effect.gen(function*() {
            // Its deliveries start at the log's end: a new subscription does not walk the log.
            const after = yield* log.latest
            const issued = yield* webhooks.create({ url, types: payload.types, createdAt: yield* DateTime.now, after })
            return Reply.created(issuedJson(issued), webhookPath({ webhookId: issued.webhook.id }))
          }))
    },
    listWebhooks: () =>
      Effect.map(webhooks.list, (all) => Reply.ok(JSON.stringify(all.map((webhook) => encodeWebhook(wire(webhook)))))),
    getWebhook: ({ params }) => Effect.map(webhooks.get(params.webhookId), (webhook) => Reply.ok(webhookJson(webhook))),
    // `state: "active"` is the one change a patch can name; an empty patch answers the subscription as it is.
    updateWebhook: ({ params, payload }) =>
      Effect.map(
        payload.state === undefined ? webhooks.get(params.webhookId) : webhooks.enable(params.webhookId),
        (webhook) => Reply.ok(webhookJson(webhook))
      ),
    deleteWebhook: ({ params }) => Effect.as(webhooks.delete(params.webhookId), Reply.noContent),
    // Sent now, signed with the secrets that sign now, whatever the subscription's state;
    // no lease, no progress, no record: the answer is what the receiver said.
    pingWebhook: ({ params }) =>
      Effect.gen(function*() {
        const sentAt = yield* DateTime.now
        const { secrets, webhook } = yield* webhooks.signing(params.webhookId, sentAt)
        const messageId = `ping_${randomUUID()}`
        const result = yield* sender.send({
          url: webhook.url,
          messageId,
          body: `{"type":"ping","timestamp":"${DateTime.formatIso(sentAt)}","data":${webhookJson(webhook)}}`,
          secrets
        })
        return Reply.ok(JSON.stringify(encodePing({
          messageId,
          sentAt,
          outcome: result.outcome,
          durationMs: result.durationMs,
          ...(result.httpStatus === undefined ? {} : { httpStatus: result.httpStatus }),
          ...(result.error === undefined ? {} : { error: result.error })
        })))
      }),
    rotateWebhookSecret: ({ params }) =>
      Effect.flatMap(DateTime.now, (now) =>
        Effect.map(
          webhooks.rotateSecret(params.webhookId, now, SECRET_ROTATION_OVERLAP),
          (issued) => Reply.ok(issuedJson(issued))
        )),
    listWebhookDeliveries: ({ params, query }) => {
      const limit = query.limit ?? PAGE_LIMIT_DEFAULT
      return Effect.map(
        webhooks.deliveries(params.webhookId, { after: query.cursor ?? 0n, limit: limit + 1 }),
        (rows) => {
          const { link, page } = keysetPage(rows, {
            limit,
            path: deliveriesPath({ webhookId: params.webhookId }),
            filters: [],
            cursorOf: (last) => cursorOf(last.id)
          })
          return Reply.ok(JSON.stringify(page.map(deliveryJson)), link === undefined ? undefined : { link })
        }
      )
    }
  } satisfies Pick<
    Handlers<never>,
    | "createWebhook"
    | "listWebhooks"
    | "getWebhook"
    | "updateWebhook"
    | "deleteWebhook"
    | "rotateWebhookSecret"
    | "pingWebhook"
    | "listWebhookDeliveries"
  >
})
