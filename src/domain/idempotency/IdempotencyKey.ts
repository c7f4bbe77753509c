import { Schema } from "effect"

/** Longest accepted `Idempotency-Key`, in characters (all ASCII, so also bytes). */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255

// Visible ASCII: no spaces, controls or non-ASCII, so a key survives every proxy and log unchanged.
const VISIBLE_ASCII = /^[\x21-\x7e]*$/

/**
 * The value of an `Idempotency-Key` header, taken exactly as sent: 1–255 visible ASCII
 * characters. The draft's quoted form (`"8e03…"`) is accepted as it is, quotes included,
 * so a client that always quotes always names the same key.
 */
export const IdempotencyKey = Schema.String.annotate({ expected: "a string" }).check(
  Schema.isMinLength(1, { message: "must not be empty" }),
  Schema.isMaxLength(IDEMPOTENCY_KEY_MAX_LENGTH, { message: `must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters` }),
  Schema.makeFilter((s: string) => VISIBLE_ASCII.test(s), {
    message: "must be visible ASCII characters only (no spaces or control characters)"
  }, true)
).pipe(Schema.brand("IdempotencyKey"))
/** A value of {@link IdempotencyKey}. */
export type IdempotencyKey = typeof IdempotencyKey.Type
