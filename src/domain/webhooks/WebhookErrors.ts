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

/**
 * `owner` no longer holds the subscription's lease: another instance claimed it (or it was
 * released), so this one's progress write was refused and the holder goes on.
 */
export class WebhookLeaseLost extends Schema.TaggedError<WebhookLeaseLost>()("WebhookLeaseLost", {
  id: WebhookId,
  owner: Schema.String
}) {
  override get message(): string {
    return `webhook ${this.id}: ${this.owner} no longer holds its lease`
  }
}
