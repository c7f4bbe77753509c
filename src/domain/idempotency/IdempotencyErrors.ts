import { Schema } from "effect"

/** The key was used, within the retention window, for a different request. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {}) {
  override get message(): string {
    return "this Idempotency-Key was already used for a different request; use a new key for a new request"
  }
}

/** The first request with this key is still being processed. */
export class IdempotencyKeyInUse extends Schema.TaggedError<IdempotencyKeyInUse>()("IdempotencyKeyInUse", {}) {
  override get message(): string {
    return "a request with this Idempotency-Key is still being processed; retry after it finishes"
  }
}
