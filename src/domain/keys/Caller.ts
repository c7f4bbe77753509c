import { Schema } from "effect"
import { KeyScope } from "./KeyScope.ts"

/**
 * Who a verified API key says the caller is: the key's public id (never the key) and its
 * scope. Rate limits and idempotency keys are kept per `keyId`.
 */
export class Caller extends Schema.Class<Caller>("Caller")({
  keyId: Schema.String,
  scope: KeyScope
}) {}
