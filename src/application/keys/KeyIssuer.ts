import { hash, randomBytes } from "node:crypto"
import { type DateTime, Redacted } from "effect"
import { ApiKey, type KeyDigest } from "../../domain/keys/ApiKey.ts"
import { expiryOf } from "../../domain/keys/KeyExpiry.ts"
import { formatKey, SECRET_BYTES } from "../../domain/keys/KeyFormat.ts"
import type { KeyId } from "../../domain/keys/KeyId.ts"
import type { IssuedKey, KeyRequest } from "../../ports/keys/ApiKeyAdmin.ts"

/** SHA-256 of a key: equal-length digests let timingSafeEqual compare keys of any length. */
// The one-shot hash: a request pays for no Hash object (half the cost of createHash here).
export const digestOf = (key: string): Buffer => hash("sha256", key, "buffer")

/**
 * A new random key (48-bit id, 256-bit secret) and its record. The key exists only in
 * the returned Redacted value; the record holds its digest.
 */
export const issue = (request: KeyRequest, now: DateTime.Utc): IssuedKey => {
  const id = randomBytes(6).toString("hex") as KeyId
  const key = formatKey(id, randomBytes(SECRET_BYTES).toString("base64url"))
  return {
    key: Redacted.make(key),
    record: new ApiKey({
      id,
      name: request.name,
      scope: request.scope,
      digest: digestOf(key).toString("hex") as KeyDigest,
      createdAt: now,
      expiresAt: expiryOf(now, request.lifetime),
      lastUsedAt: undefined,
      revokedAt: undefined
    }, { disableChecks: true })
  }
}
