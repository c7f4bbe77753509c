import { Duration, Result } from "effect"
import { IdempotencyKeyReused } from "./IdempotencyErrors.ts"
import { IDEMPOTENCY_RETENTION, type IdempotentOutcome, type IdempotentRequest, type StoredResponse } from "./IdempotentRequest.ts"

/** What a store keeps per (keyId, key): the first request's fingerprint and its answer. */
export interface KeptAnswer {
  readonly fingerprint: string
  readonly response: StoredResponse
}

/** The rule for a key seen before: the same request replays its answer, another is refused. */
export const replay = (kept: KeptAnswer, request: IdempotentRequest): Result.Result<IdempotentOutcome, IdempotencyKeyReused> =>
  kept.fingerprint === request.fingerprint
    ? Result.succeed({ response: kept.response, replayed: true })
    : Result.fail(new IdempotencyKeyReused())

/** Whether an answer kept at `keptAtMillis` is forgotten at `nowMillis`. */
export const isExpired = (keptAtMillis: number, nowMillis: number, retention: Duration.Duration = IDEMPOTENCY_RETENTION) =>
  nowMillis - keptAtMillis >= Duration.toMillis(retention)
