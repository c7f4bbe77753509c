import { Duration } from "effect"
import { IDEMPOTENCY_RETENTION, type IdempotentRequest } from "../../domain/idempotency/IdempotentRequest.ts"

/** Tuning shared by every IdempotentCreates adapter. */
export interface IdempotencyOptions {
  /** How long a key is remembered. Default: 24 hours. */
  readonly retention?: Duration.Input | undefined
  /** How long a duplicate waits for the first request with its key before it is a 409. Default: 1 second. */
  readonly inProgressWait?: Duration.Input | undefined
}

/** The default bound on waiting for the first request with a key: far above a create's usual milliseconds. */
export const IN_PROGRESS_WAIT = Duration.seconds(1)

/** The options with their defaults filled in. */
export const resolve = (options: IdempotencyOptions) => ({
  retention: Duration.fromInputUnsafe(options.retention ?? IDEMPOTENCY_RETENTION),
  inProgressWait: Duration.fromInputUnsafe(options.inProgressWait ?? IN_PROGRESS_WAIT)
})

/** The identity of a key: the key (visible ASCII, so never NUL), then its caller's key id. */
export const keyIdentity = (request: IdempotentRequest) => `${request.key}\u0000${request.keyId}`
