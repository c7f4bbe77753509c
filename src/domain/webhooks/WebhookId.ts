import { Schema } from "effect"
import { Int64 } from "../Int64.ts"

/** The id of a webhook subscription: a positive int64 assigned by the store. */
export const WebhookId = Int64.check(Schema.isGreaterThanBigInt(0n, { message: "must be a positive integer" }))
  .pipe(Schema.brand("WebhookId"))
/** A value of {@link WebhookId}. */
export type WebhookId = typeof WebhookId.Type
