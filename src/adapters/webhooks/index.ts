/** Webhook delivery over HTTP: the WebhookSender that signs, bounds and guards each delivery. */
export * as WebhookSenderHttp from "./WebhookSenderHttp.ts"
