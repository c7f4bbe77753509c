import { Clock, Effect, Layer, Result } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { IdempotentRequest, StoredResponse } from "../../domain/idempotency/IdempotentRequest.ts"
import { isExpired, type KeptAnswer, replay } from "../../domain/idempotency/KeptAnswer.ts"
import { IdempotentCreates } from "../../ports/IdempotentCreates.ts"
import { type IdempotencyOptions, keyIdentity, resolve } from "../idempotency/IdempotencyOptions.ts"
import { InFlightKeys } from "../idempotency/InFlightKeys.ts"

interface Kept extends KeptAnswer {
  readonly keptAt: number
}

/**
 * IdempotentCreates in process memory. In memory a create and the answer kept for it
 * cannot be separated by a crash, so "one transaction" is this fiber's next step.
 */
export const make = (options: IdempotencyOptions = {}): IdempotentCreates["Service"] => {
  const { inProgressWait, retention } = resolve(options)
  const inFlight = new InFlightKeys(inProgressWait)
  // In the order kept (a key kept again moves to the end), so expired answers are at the front.
  const kept = new Map<string, Kept>()

  const forgetExpired = (now: number) => {
    for (const [id, answer] of kept) {
      if (!isExpired(answer.keptAt, now, retention)) break
      kept.delete(id)
    }
  }

  // A plain span rather than Effect.fn, which would erase the type parameter R.
  const run = <R>(request: IdempotentRequest, create: Effect.Effect<StoredResponse, StoreUnavailable, R>) => {
    const id = keyIdentity(request)
    return inFlight.exclusive(
      id,
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        forgetExpired(now)
        const previous = kept.get(id)
        if (previous !== undefined && !isExpired(previous.keptAt, now, retention)) {
          const decision = replay(previous, request)
          if (Result.isFailure(decision)) return yield* decision.failure
          return decision.success
        }
        const response = yield* create
        kept.delete(id)
        kept.set(id, { fingerprint: request.fingerprint, response, keptAt: yield* Clock.currentTimeMillis })
        return { response, replayed: false }
      })
    ).pipe(Effect.withSpan("IdempotentCreates.run"))
  }

  return IdempotentCreates.of({ run })
}

/** IdempotentCreates in process memory; nothing survives a restart. */
export const layer = (options?: IdempotencyOptions): Layer.Layer<IdempotentCreates> =>
  Layer.sync(IdempotentCreates, () => make(options))
