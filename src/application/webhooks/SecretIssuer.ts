import { randomBytes } from "node:crypto"
import { WEBHOOK_SECRET_BYTES, formatSecret, type WebhookSecret } from "../../domain/webhooks/WebhookSecret.ts"

/** A new random signing secret, for a subscription or its rotation. */
export const issueSecret = (): WebhookSecret => formatSecret(randomBytes(WEBHOOK_SECRET_BYTES))
