import { Duration, Result, Schema } from "effect"
import { Base64 } from "effect/encoding"

/** Fewest random bytes in a signing secret (the Standard Webhooks minimum). */
export const WEBHOOK_SECRET_BYTES_MIN = 24
/** Most random bytes in a signing secret (the Standard Webhooks maximum). */
export const WEBHOOK_SECRET_BYTES_MAX = 64
/** Random bytes in the secrets the store makes. */
export const WEBHOOK_SECRET_BYTES = 32

const PREFIX = "whsec_"

/** The HMAC key a secret stands for, or undefined when it is not a well-formed secret. */
export const secretKey = (secret: string): Uint8Array | undefined => {
  if (!secret.startsWith(PREFIX)) return undefined
  const base64 = secret.slice(PREFIX.length)
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return undefined
  const bytes = Result.getOrUndefined(Base64.decode(base64))
  return bytes !== undefined && bytes.length >= WEBHOOK_SECRET_BYTES_MIN && bytes.length <= WEBHOOK_SECRET_BYTES_MAX ? bytes : undefined
}

/**
 * A webhook signing secret in the Standard Webhooks format: `whsec_` and the base64 of
 * 24 to 64 random bytes. The store keeps it (it must sign every delivery) but shows it
 * only once, when it is made.
 */
export const WebhookSecret = Schema.String.check(
  Schema.makeFilter((secret) => secretKey(secret) !== undefined || `must be "whsec_" and the base64 of ${WEBHOOK_SECRET_BYTES_MIN} to ${WEBHOOK_SECRET_BYTES_MAX} bytes`)
).pipe(Schema.brand("WebhookSecret"))
/** A value of {@link WebhookSecret}. */
export type WebhookSecret = typeof WebhookSecret.Type

/** The secret made of `bytes` (which must be 24 to 64 random bytes). */
export const formatSecret = (bytes: Uint8Array): WebhookSecret => `${PREFIX}${Base64.encode(bytes)}` as WebhookSecret

/** How long a rotated-out secret still signs, beside the new one, so receivers can move to the new one. */
export const SECRET_ROTATION_OVERLAP = Duration.hours(24)
