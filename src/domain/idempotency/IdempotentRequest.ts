import { Duration, Schema } from "effect"
import { createHash } from "node:crypto"
import type { NewPet } from "../NewPet.ts"
import type { PetId } from "../PetId.ts"
import { IdempotencyKey } from "./IdempotencyKey.ts"

/** How long a key is remembered: a reuse within this window replays, after it creates anew. */
export const IDEMPOTENCY_RETENTION = Duration.hours(24)

// Of the request's canonical text: the operation and its decoded input as a JSON array,
// fields in a fixed order, integers with every digit.
const digest = (canonical: string) => createHash("sha256").update(canonical).digest("hex")

/**
 * What makes two requests "the same": the operation and its decoded input. Whitespace,
 * key order, escapes and the fields the API ignores (a client `id`, unknown keys) do not
 * count; any difference in a value the create uses does. Hex SHA-256, so every store
 * keeps 64 characters whatever the body. One key names one request, whichever operation
 * it was: the same key on the other create is a different request.
 */
export const createPetFingerprint = (pet: NewPet): string =>
  digest(JSON.stringify(["createPet", pet.name, String(pet.categoryId), pet.status ?? null]))

/** {@link createPetFingerprint} of placeOrder: the pet is all its input (the quantity is always 1). */
export const placeOrderFingerprint = (petId: PetId): string => digest(JSON.stringify(["placeOrder", String(petId)]))

/** One create sent with an `Idempotency-Key`: whose key, which key, and which request. */
export class IdempotentRequest extends Schema.Class<IdempotentRequest>("IdempotentRequest")({
  /** The API key's public id (Caller.keyId): keys of different callers never meet. */
  keyId: Schema.String,
  key: IdempotencyKey,
  /** {@link createPetFingerprint} or {@link placeOrderFingerprint} of the request. */
  fingerprint: Schema.String
}) {}

/**
 * The answer a create gave, kept to be given again: status, exact body bytes (as text)
 * and `Location`. Only answers that will not change on a retry are kept (2xx and the
 * store's deterministic refusals), never a 5xx.
 */
export class StoredResponse extends Schema.Class<StoredResponse>("StoredResponse")({
  status: Schema.Int,
  body: Schema.String,
  location: Schema.optionalKey(Schema.String)
}) {}

/** What an idempotent create answers, and whether it is a replay of an earlier answer. */
export interface IdempotentOutcome {
  readonly response: StoredResponse
  readonly replayed: boolean
}
