import { pbkdf2, timingSafeEqual } from "node:crypto"
import { Effect, Layer, Option, Redacted } from "effect"
import { Caller } from "../../domain/keys/Caller.ts"
import { ApiKeys } from "../../ports/keys/ApiKeys.ts"
import { digestOf } from "../../application/keys/KeyIssuer.ts"
import * as Spans from "../observability/Spans.ts"

/** A fixed key, ready to compare: its digest and the caller it names. */
export interface StaticKey {
  readonly hash: Buffer
  readonly caller: Caller
}

// The id is stored where the key is not (Redis bucket names, kept idempotent answers), so
// it must not be a cheap test for guessing a weak key offline: 200,000 rounds of
// PBKDF2-SHA256 (30-50 ms here, once per key at start-up) per guess, where a plain
// digest allowed billions per second. CPU-hard rather than memory-hard (scrypt), so that
// start-up does not raise the process's peak memory. Derived on libuv's thread pool, so
// the event loop goes on answering meanwhile and several keys are derived at once.
const ID_SALT = "animal-store API_KEYS key id"
const ID_ROUNDS = 200_000
const idOf = (key: string) =>
  Effect.callback<string>((resume) => {
    pbkdf2(key, ID_SALT, ID_ROUNDS, 6, "sha256", (error, id) => {
      // Only a failure of the crypto library itself (out of memory) can land here.
      resume(error === null ? Effect.succeed(`env-${id.toString("hex")}`) : Effect.die(error))
    })
  })

/**
 * Each key as a `write` caller. A key's id is `env-` and 48 bits derived from it: the same
 * on every instance and across restarts, and it says nothing about the key.
 */
export const staticKeys = (keys: ReadonlyArray<Redacted.Redacted<string>>): Effect.Effect<ReadonlyArray<StaticKey>> =>
  Effect.forEach(keys, (key) =>
    Effect.map(idOf(Redacted.value(key)), (keyId) => ({
      hash: digestOf(Redacted.value(key)),
      caller: new Caller({ keyId, scope: "write" })
    })), { concurrency: "unbounded" })

/** The caller of the static key whose digest is `presented`, checking every key without stopping early. */
export const matchStatic = (accepted: ReadonlyArray<StaticKey>, presented: Buffer): Caller | undefined => {
  let found: Caller | undefined
  for (const candidate of accepted) {
    if (timingSafeEqual(candidate.hash, presented)) found = candidate.caller
  }
  return found
}

/** Accepts exactly the given keys, compared in constant time, each as a `write` caller. */
export const layer = (keys: ReadonlyArray<Redacted.Redacted<string>>): Layer.Layer<ApiKeys> =>
  Layer.effect(
    ApiKeys,
    Effect.map(staticKeys(keys), (accepted) =>
      ApiKeys.of({
        verify: Spans.method("ApiKeys.verify", (key: Redacted.Redacted<string>) =>
          Effect.sync(() => Option.fromUndefinedOr(matchStatic(accepted, digestOf(Redacted.value(key)))))
        ),
        // A fixed key is never revoked.
        stillAccepts: (caller) => Effect.sync(() => accepted.some((key) => key.caller.keyId === caller.keyId))
      }))
  )
