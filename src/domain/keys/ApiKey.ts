import { Schema } from "effect"
import { KeyId } from "./KeyId.ts"
import { KeyName } from "./KeyName.ts"
import { KeyScope } from "./KeyScope.ts"

/** A SHA-256 digest as 64 lowercase hex digits: all a store keeps of a key. */
export const KeyDigest = Schema.String.check(Schema.isPattern(/^[0-9a-f]{64}$/, { message: "must be 64 lowercase hex digits" }))
  .pipe(Schema.brand("KeyDigest"))
/** A value of {@link KeyDigest}. */
export type KeyDigest = typeof KeyDigest.Type

/**
 * A managed API key as the store keeps it. The key itself is never kept, only its
 * digest; it is shown once, when issued.
 */
export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: KeyId,
  name: KeyName,
  scope: KeyScope,
  digest: KeyDigest,
  createdAt: Schema.DateTimeUtc,
  /** From this instant on the key is refused; none: it does not expire. */
  expiresAt: Schema.UndefinedOr(Schema.DateTimeUtc),
  /** Last accepted use, recorded at most about once a minute per key. */
  lastUsedAt: Schema.UndefinedOr(Schema.DateTimeUtc),
  /** When it was revoked; a revoked key is refused at once. */
  revokedAt: Schema.UndefinedOr(Schema.DateTimeUtc)
}) {}
