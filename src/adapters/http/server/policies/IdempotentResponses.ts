/**
 * The HTTP side of idempotent creates (ApiRouter applies it to every endpoint whose
 * headers declare `Idempotency-Key`): a create's answer as the response kept for its
 * key, and a kept answer (or the key's refusal) as the response sent.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { StoreUnavailable } from "../../../../domain/Errors.ts"
import type { IdempotencyKeyInUse, IdempotencyKeyReused } from "../../../../domain/idempotency/IdempotencyErrors.ts"
import { type IdempotentOutcome, StoredResponse } from "../../../../domain/idempotency/IdempotentRequest.ts"
import { REPLAYED_HEADER } from "../../api/IdempotencyKeyHeader.ts"
import { errorResponse } from "./ErrorResponses.ts"
import { type DomainError, headersOf, toHttpError } from "./HttpErrors.ts"
import type { Reply } from "../routing/Reply.ts"

/**
 * A create's answer as it is kept: its reply (status, body, `Location`, `ETag`), or a refusal of
 * the store that a retry would meet again (no such pet, pet not available) with the
 * Error body `errorResponse` writes. A store that is unavailable keeps nothing.
 */
export const kept = <R>(
  create: Effect.Effect<Reply, DomainError, R>
): Effect.Effect<StoredResponse, StoreUnavailable, R> =>
  Effect.matchEffect(create, {
    onSuccess: (reply) => {
      const location = reply.headers?.["location"]
      const etag = reply.headers?.["etag"]
      return Effect.succeed(
        new StoredResponse({
          status: reply.status,
          body: reply.body,
          ...(location === undefined ? {} : { location }),
          ...(etag === undefined ? {} : { etag })
        })
      )
    },
    onFailure: (error) => {
      if (error._tag === "StoreUnavailable") return Effect.fail(error)
      const { code, message, status } = toHttpError(error)
      return Effect.succeed(new StoredResponse({ status, body: JSON.stringify({ code, message, status }) }))
    }
  })

/** A first answer or a replay, byte for byte the same; a replay says so. */
const sent = ({ replayed, response }: IdempotentOutcome) =>
  HttpServerResponse.text(response.body, {
    status: response.status,
    contentType: "application/json",
    headers: {
      ...(response.location === undefined ? {} : { location: response.location }),
      ...(response.etag === undefined ? {} : { etag: response.etag }),
      ...(replayed ? { [REPLAYED_HEADER]: "true" } : {})
    }
  })

/** The outcome of IdempotentCreates.run as the response: the kept answer, or the key's or store's error. */
export const respond = <R>(
  run: Effect.Effect<IdempotentOutcome, IdempotencyKeyInUse | IdempotencyKeyReused | StoreUnavailable, R>
) =>
  run.pipe(
    Effect.map(sent),
    Effect.catch((error) =>
      Effect.succeed(errorResponse(toHttpError(error), headersOf(error)))
    )
  )
