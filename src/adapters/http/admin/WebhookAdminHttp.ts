import { Effect, Layer, Schema } from "effect"
import { InvalidInput, StoreUnavailable } from "../../../domain/Errors.ts"
import type { EventType } from "../../../domain/events/EventType.ts"
import { WebhookNotFound } from "../../../domain/webhooks/WebhookErrors.ts"
import { WebhookId } from "../../../domain/webhooks/WebhookId.ts"
import { WebhookAdmin } from "../../../ports/webhooks/WebhookAdmin.ts"
import { AdminCall } from "./AdminCall.ts"
import type { AdminAddress } from "./AdminFile.ts"
import { AddWebhookJson, ADMIN_PATHS, IssuedWebhookJson, RemovedWebhookJson, WebhookRefJson, WebhooksJson } from "./AdminJson.ts"

const decodeId = Schema.decodeUnknownOption(Schema.toCodecJson(WebhookId))

/**
 * WebhookAdmin through a running service's admin routes (AdminRoutes), for the command
 * while the service holds the embedded store. The service does the work, with its own
 * URL rules (WEBHOOK_ALLOW_PRIVATE as the service has it), and delivers to the new
 * subscription from its next event.
 */
export const make = (address: AdminAddress) => {
  const call = <A>(method: "GET" | "POST", path: string, response: Schema.Decoder<A>, body?: unknown) =>
    Effect.gen(function*() {
      const answer = yield* AdminCall.send(address, method, path, response, body)
      if (answer._tag === "Answered") return answer.value
      const { error, message, subject } = answer.refusal
      const id = decodeId(subject)
      switch (error) {
        case "WebhookNotFound":
          return yield* id._tag === "Some"
            ? new WebhookNotFound({ id: id.value })
            : Effect.die(new Error(`admin port refused an unknown webhook id ${subject}`))
        case "InvalidInput":
          return yield* new InvalidInput({ message })
        default:
          return yield* new StoreUnavailable({ message })
      }
    })

  const ref = (id: WebhookId) => Schema.encodeSync(WebhookRefJson)({ id })

  return WebhookAdmin.of({
    add: Effect.fn("WebhookAdmin.add")((request: { readonly url: string; readonly types: readonly [EventType, ...Array<EventType>] }) =>
      call("POST", ADMIN_PATHS.webhooks, IssuedWebhookJson, Schema.encodeSync(AddWebhookJson)(request)).pipe(
        Effect.catchTag("WebhookNotFound", Effect.die),
        Effect.map(({ secret, webhook }) => ({ secret, webhook }))
      )
    ),
    list: call("GET", ADMIN_PATHS.webhooks, WebhooksJson).pipe(
      Effect.catchTags({ WebhookNotFound: Effect.die, InvalidInput: Effect.die }),
      Effect.map(({ webhooks }) => webhooks),
      Effect.withSpan("WebhookAdmin.list")
    ),
    remove: Effect.fn("WebhookAdmin.remove")((id: WebhookId) =>
      call("POST", ADMIN_PATHS.webhookRemove, RemovedWebhookJson, ref(id)).pipe(
        Effect.catchTag("InvalidInput", Effect.die),
        Effect.map(({ webhook }) => webhook)
      )
    ),
    rotate: Effect.fn("WebhookAdmin.rotate")((id: WebhookId) =>
      call("POST", ADMIN_PATHS.webhookRotate, IssuedWebhookJson, ref(id)).pipe(
        Effect.catchTag("InvalidInput", Effect.die),
        Effect.flatMap(({ previousSignsUntil, secret, webhook }) =>
          previousSignsUntil === undefined
            ? Effect.die(new Error("admin port answered a rotation without the old secret's end"))
            : Effect.succeed({ secret, webhook, previousSignsUntil })
        )
      )
    )
  })
}

/** WebhookAdmin through the admin routes at `address`. */
export const layer = (address: AdminAddress): Layer.Layer<WebhookAdmin> => Layer.succeed(WebhookAdmin, make(address))
