import { Duration, Schema } from "effect"
import type { EventType } from "../events/EventType.ts"
import type { NewPet } from "../pets/NewPet.ts"
import type { PetId } from "../pets/PetId.ts"
import { IdempotencyKey } from "./IdempotencyKey.ts"

/** How long a key is remembered: a reuse within this window replays, after it creates anew. */
export const IDEMPOTENCY_RETENTION = Duration.hours(24)

/**
 * What makes two requests "the same": the operation and its decoded input, as the text of
 * a JSON array (fields in a fixed order, integers with every digit). Whitespace, key
 * order, escapes and the fields the API ignores (a client `id`, unknown keys) do not
 * count; any difference in a value the create uses does. One key names one request,
 * whichever operation it was: the same key on the other create is a different request.
 */
export const createPetIdentity = (pet: NewPet): string =>
  // Tags only when there are some, so the identity of a tagless create is what it was before tags.
  JSON.stringify(["createPet", pet.name, String(pet.categoryId), pet.status ?? null, ...(pet.tags.length === 0 ? [] : [pet.tags])])

/** {@link createPetIdentity} of placeOrder: the pet is all its input (the quantity is always 1). */
export const placeOrderIdentity = (petId: PetId): string => JSON.stringify(["placeOrder", String(petId)])

/**
 * {@link createPetIdentity} of createWebhook: the URL as sent (before the URL check puts it in
 * its normal form) and the types in their order, as the subscription keeps them.
 */
export const createWebhookIdentity = (webhook: {
  readonly url: string
  readonly types: ReadonlyArray<EventType>
}): string => JSON.stringify(["createWebhook", webhook.url, webhook.types])

/** One create sent with an `Idempotency-Key`: whose key, which key, and which request. */
export class IdempotentRequest extends Schema.Class<IdempotentRequest>("IdempotentRequest")({
  /** The API key's public id (Caller.keyId): keys of different callers never meet. */
  keyId: Schema.String,
  key: IdempotencyKey,
  /**
   * A digest of the request's identity ({@link createPetIdentity}, {@link placeOrderIdentity},
   * {@link createWebhookIdentity}), made where the request arrives, so that a store compares
   * and keeps it at a fixed size.
   */
  fingerprint: Schema.String
}) {}

/**
 * The answer a create gave, kept to be given again: status, exact body bytes (as text)
 * and `Location` and `ETag`. Only answers that will not change on a retry are kept (2xx and the
 * store's deterministic refusals), never a 5xx.
 */
export class StoredResponse extends Schema.Class<StoredResponse>("StoredResponse")({
  status: Schema.Int,
  body: Schema.String,
  location: Schema.optionalKey(Schema.String),
  etag: Schema.optionalKey(Schema.String)
}) {}

/** What an idempotent create answers, and whether it is a replay of an earlier answer. */
export interface IdempotentOutcome {
  readonly response: StoredResponse
  readonly replayed: boolean
}
