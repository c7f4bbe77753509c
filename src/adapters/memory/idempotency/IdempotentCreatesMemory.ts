import { Clock, Effect, Layer, Result } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.ts"
import type { IdempotentRequest, StoredResponse } from "../../../domain/idempotency/IdempotentRequest.ts"
import { isExpired, type KeptAnswer, replay } from "../../../domain/idempotency/KeptAnswer.ts"
import { IdempotentCreates } from "../../../ports/idempotency/IdempotentCreates.ts"
import { type IdempotencyOptions, keyIdentity, resolve } from "../../idempotency/IdempotencyOptions.ts"
import { InFlightKeys } from "../../idempotency/InFlightKeys.ts"
import * as Spans from "../../observability/Spans.ts"

interface Kept extends KeptAnswer {
  readonly keptAt: number
}

/**
 * The default cap on keys kept in memory. A key is forgotten early only after 10,000 other
 * keyed creates have come since it was last used, far more than arrive within a client's
 * retries (seconds to minutes); and 10,000 answers hold at most about 9 MiB of heap
 * (measured: 5 MiB with UUID keys and 404s, 9 MiB with 255-character keys and pets' 201s).
 */
export const MAX_KEYS = 10_000

/** Tuning for the in-memory IdempotentCreates. */
export interface Options extends IdempotencyOptions {
  /**
   * How many keys are kept at most (at least 1). One more forgets the least recently used
   * (kept or replayed longest ago): the next request with that key creates again.
   * Default: {@link MAX_KEYS}.
   */
  readonly maxKeys?: number | undefined
}

/**
 * IdempotentCreates in process memory. In memory a create and the answer kept for it
 * cannot be separated by a crash, so "one transaction" is this fiber's next step.
 *
 * Kept, as on the SQL stores, are all the answers `create` gives, refusals (404, 409)
 * included: a retry must meet the answer its key first got, not an order placed later
 * because the pet has become available since. The memory is bounded by the key count
 * (an LRU of `maxKeys`) as well as by the retention.
 */
export const make = (options: Options = {}): IdempotentCreates["Service"] => {
  const { inProgressWait, retention } = resolve(options)
  const maxKeys = Math.max(1, options.maxKeys ?? MAX_KEYS)
  const inFlight = new InFlightKeys(inProgressWait)
  // In the order of last use (a key kept or replayed moves to the end): the least recently
  // used is at the front, and so are expired answers, short of one replayed lately.
  const kept = new Map<string, Kept>()

  const forgetExpired = (now: number) => {
    for (const [id, answer] of kept) {
      if (!isExpired(answer.keptAt, now, retention)) break
      kept.delete(id)
    }
  }

  const use = (id: string, answer: Kept) => {
    kept.delete(id)
    kept.set(id, answer)
    if (kept.size > maxKeys) kept.delete(kept.keys().next().value!)
  }

  // A span made once, not Effect.fn, which would erase the type parameter R.
  const runSpan = Spans.span("IdempotentCreates.run")
  const run = <R>(request: IdempotentRequest, create: Effect.Effect<StoredResponse, StoreUnavailable, R>) => {
    const id = keyIdentity(request)
    return inFlight.exclusive(
      id,
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        forgetExpired(now)
        const previous = kept.get(id)
        if (previous !== undefined && !isExpired(previous.keptAt, now, retention)) {
          use(id, previous)
          const decision = replay(previous, request)
          if (Result.isFailure(decision)) return yield* decision.failure
          return decision.success
        }
        const response = yield* create
        use(id, { fingerprint: request.fingerprint, response, keptAt: yield* Clock.currentTimeMillis })
        return { response, replayed: false }
      })
    ).pipe(runSpan)
  }

  return IdempotentCreates.of({ run })
}

/** IdempotentCreates in process memory; nothing survives a restart. */
export const layer = (options?: Options): Layer.Layer<IdempotentCreates> =>
  Layer.sync(IdempotentCreates, () => make(options))
