import { Schema } from "effect"
import { IdempotencyKey } from "../../../domain/idempotency/IdempotencyKey.ts"

/** The response header that marks a replayed answer. */
export const REPLAYED_HEADER = "idempotent-replayed"

/** The request headers of the idempotent creates: an optional `Idempotency-Key`. */
export const IdempotencyKeyHeaders = {
  "idempotency-key": Schema.optionalKey(IdempotencyKey.annotate({
    description: "Makes a retry of this create safe: 1–255 visible ASCII characters, unique per request " +
      "(a UUID). Remembered for 24 hours per API key."
  }))
}

/** What the idempotent creates' OpenAPI descriptions say about the key. */
export const IDEMPOTENCY_DESCRIPTION = "With an `Idempotency-Key`, a retry with the same key and body " +
  "within 24 hours answers the first request's status and body again (with `Idempotent-Replayed: true`) " +
  "and stores nothing; the same key with a different body is a 422 `idempotency_key_reused`; while the " +
  "first request is still being processed, a 409 `idempotency_key_in_use` with `Retry-After`."
