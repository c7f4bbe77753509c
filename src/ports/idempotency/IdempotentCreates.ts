import { Context, type Effect } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { IdempotencyKeyInUse, IdempotencyKeyReused } from "../../domain/idempotency/IdempotencyErrors.ts"
import type { IdempotentOutcome, IdempotentRequest, StoredResponse } from "../../domain/idempotency/IdempotentRequest.ts"

/**
 * Where the answers of creates sent with an `Idempotency-Key` are kept, beside the store
 * they create in: every adapter implements it over the same storage as PetRepository and
 * OrderRepository, so the create and its kept answer commit together or not at all.
 */
export class IdempotentCreates extends Context.Service<IdempotentCreates, {
  /**
   * Runs `create` at most once per (keyId, key) within the retention window (24 hours),
   * keeping its answer in the same transaction as what it stores. A later request with
   * the same key gets the kept answer (`replayed: true`), or IdempotencyKeyReused when its
   * fingerprint differs. A request whose key is held by a create still running waits a
   * bounded time for it, then replays; still running after that: IdempotencyKeyInUse.
   * When `create` fails (StoreUnavailable), nothing is kept, so a retry creates. A store
   * may also bound how many keys it keeps (the memory store forgets the least recently
   * used past its cap); a key it has forgotten creates again.
   */
  readonly run: <R>(
    request: IdempotentRequest,
    create: Effect.Effect<StoredResponse, StoreUnavailable, R>
  ) => Effect.Effect<IdempotentOutcome, IdempotencyKeyReused | IdempotencyKeyInUse | StoreUnavailable, R>
}>()("animal-store/ports/IdempotentCreates") {}
