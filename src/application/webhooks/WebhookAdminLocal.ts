import { DateTime, Effect, Layer } from "effect"
import { SECRET_ROTATION_OVERLAP } from "../../domain/webhooks/WebhookSecret.ts"
import type { WebhookId } from "../../domain/webhooks/WebhookId.ts"
import type { EventType } from "../../domain/events/EventType.ts"
import { EventLog } from "../../ports/events/EventLog.ts"
import { WebhookAdmin } from "../../ports/webhooks/WebhookAdmin.ts"
import { WebhookRepository } from "../../ports/webhooks/WebhookRepository.ts"
import { WebhookSender } from "../../ports/webhooks/WebhookSender.ts"

/**
 * Webhook management on the subscriptions, event log and URL rules in context: the
 * command's work done in this process (the command on a store it opens itself, or a
 * running service for the command, through its admin port).
 */
export const make = Effect.gen(function*() {
  const webhooks = yield* WebhookRepository
  const log = yield* EventLog
  const sender = yield* WebhookSender

  const add = Effect.fn("WebhookAdmin.add")(function*(request: {
    readonly url: string
    readonly types: readonly [EventType, ...Array<EventType>]
  }) {
    const url = yield* sender.check(request.url)
    // Its deliveries start at the log's end: a new subscription does not walk the log.
    const after = yield* log.latest
    return yield* webhooks.create({ url, types: request.types, createdAt: yield* DateTime.now, after })
  })

  const remove = Effect.fn("WebhookAdmin.remove")(function*(id: WebhookId) {
    const webhook = yield* webhooks.get(id)
    yield* webhooks.delete(id)
    return webhook
  })

  const rotate = Effect.fn("WebhookAdmin.rotate")(function*(id: WebhookId) {
    const now = yield* DateTime.now
    const issued = yield* webhooks.rotateSecret(id, now, SECRET_ROTATION_OVERLAP)
    return { ...issued, previousSignsUntil: DateTime.addDuration(now, SECRET_ROTATION_OVERLAP) }
  })

  return WebhookAdmin.of({ add, list: webhooks.list.pipe(Effect.withSpan("WebhookAdmin.list")), remove, rotate })
})

/** WebhookAdmin over the WebhookRepository, EventLog and WebhookSender in context. */
export const layer: Layer.Layer<WebhookAdmin, never, WebhookRepository | EventLog | WebhookSender> = Layer.effect(
  WebhookAdmin,
  make
)
