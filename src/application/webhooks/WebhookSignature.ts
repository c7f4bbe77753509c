import { createHmac } from "node:crypto"
import { secretKey, type WebhookSecret } from "../../domain/webhooks/WebhookSecret.ts"

/** The headers that authenticate a delivery, as the Standard Webhooks specification names them. */
export interface SignatureHeaders {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

/**
 * Signs a delivery the Standard Webhooks way: `v1,` and the base64 HMAC-SHA256 of
 * `${id}.${timestamp}.${body}` keyed with the secret's bytes, one signature per secret,
 * space-separated, so that during a rotation's overlap a receiver that knows either
 * secret can verify. `id` stays the same across retries of a message (receivers
 * deduplicate on it); `timestamp` is the attempt's, in seconds since the epoch (receivers
 * refuse one too far from their clock, against replays).
 */
export const signatureHeaders = (
  message: { readonly id: string; readonly timestamp: number; readonly body: string },
  secrets: ReadonlyArray<WebhookSecret>
): SignatureHeaders => {
  const signed = `${message.id}.${message.timestamp}.${message.body}`
  const signatures = secrets.map((secret) => {
    // A WebhookSecret is well formed by its type: secretKey finds its bytes.
    const mac = createHmac("sha256", secretKey(secret)!).update(signed).digest("base64")
    return `v1,${mac}`
  })
  return {
    "webhook-id": message.id,
    "webhook-timestamp": String(message.timestamp),
    "webhook-signature": signatures.join(" ")
  }
}
