import { Schema } from "effect"
import { WebhookId } from "./WebhookId.ts"

/** No webhook subscription has the requested id. */
export class WebhookNotFound extends Schema.TaggedError<WebhookNotFound>()("WebhookNotFound", {
  id: WebhookId
}) {
  override get message(): string {
    return `webhook ${this.id} not found`
  }
}
