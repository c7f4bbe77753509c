/**
 * The HTTP side of idempotent creates, shared by createPet (FastRoutes) and placeOrder
 * (StoreHandlers): a create's answer as the response kept for its key, and a kept
 * answer (or the key's refusal) as the response sent.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { PetNotAvailable, PetNotFound, StoreUnavailable } from "../../../domain/Errors.ts"
import type { IdempotencyKeyInUse, IdempotencyKeyReused } from "../../../domain/idempotency/IdempotencyErrors.ts"
import { type IdempotentOutcome, StoredResponse } from "../../../domain/idempotency/IdempotentRequest.ts"
import { REPLAYED_HEADER } from "../api/IdempotencyKeyHeader.ts"
import { errorResponse } from "./ErrorResponses.ts"
import { toHttpError } from "./HttpErrors.ts"

/** A 201 with its body and `Location`, as it is kept. */
export const created = (body: string, location: string) => new StoredResponse({ status: 201, body, location })

/**
 * A refusal of the store that a retry would meet again (no such pet, pet not available),
 * kept like a success. The body is the Error body `errorResponse` writes.
 */
export const refused = (error: PetNotFound | PetNotAvailable) => {
  const { code, message, status } = toHttpError(error)
  return new StoredResponse({ status, body: JSON.stringify({ code, message, status }) })
}

/** A first answer or a replay, byte for byte the same; a replay says so. */
const sent = ({ replayed, response }: IdempotentOutcome) =>
  HttpServerResponse.text(response.body, {
    status: response.status,
    contentType: "application/json",
    headers: {
      ...(response.location === undefined ? {} : { location: response.location }),
      ...(replayed ? { [REPLAYED_HEADER]: "true" } : {})
    }
  })

// Seconds a client waits before retrying a key still in use. The duplicate has already
// waited 1 s for the first request, whose create usually takes milliseconds.
const IN_USE_RETRY_AFTER = "1"

/** The outcome of IdempotentCreates.run as the response: the kept answer, or the key's or store's error. */
export const respond = <R>(
  run: Effect.Effect<IdempotentOutcome, IdempotencyKeyInUse | IdempotencyKeyReused | StoreUnavailable, R>
) =>
  run.pipe(
    Effect.map(sent),
    Effect.catch((error) =>
      Effect.succeed(errorResponse(
        toHttpError(error),
        error._tag === "IdempotencyKeyInUse" ? { "retry-after": IN_USE_RETRY_AFTER } : undefined
      ))
    )
  )
