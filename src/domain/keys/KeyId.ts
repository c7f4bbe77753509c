import { Schema } from "effect"

/**
 * The public id of a managed API key: 12 lowercase hex digits, part of the key itself.
 * It names the key in lists, logs, rate limits and idempotency records; knowing it
 * gives no access.
 */
export const KeyId = Schema.String.check(Schema.isPattern(/^[0-9a-f]{12}$/, { message: "must be 12 lowercase hex digits" }))
  .pipe(Schema.brand("KeyId"))
/** A value of {@link KeyId}. */
export type KeyId = typeof KeyId.Type
