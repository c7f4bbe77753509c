import { timingSafeEqual } from "node:crypto"
import { Effect, Layer, Option, Redacted } from "effect"
import { Caller } from "../../domain/keys/Caller.ts"
import { ApiKeys } from "../../ports/ApiKeys.ts"
import { digestOf } from "./KeyIssuer.ts"

/** A fixed key, ready to compare: its digest and the caller it names. */
export interface StaticKey {
  readonly hash: Buffer
  readonly caller: Caller
}

/**
 * Each key as a `write` caller. A key's id is `env-` and the start of its digest: the
 * same on every instance and across restarts, and it says nothing about the key.
 */
export const staticKeys = (keys: ReadonlyArray<Redacted.Redacted<string>>): ReadonlyArray<StaticKey> =>
  keys.map((key) => {
    const hash = digestOf(Redacted.value(key))
    return { hash, caller: new Caller({ keyId: `env-${hash.subarray(0, 6).toString("hex")}`, scope: "write" }) }
  })

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
  Layer.sync(ApiKeys, () => {
    const accepted = staticKeys(keys)
    return ApiKeys.of({
      verify: Effect.fn("ApiKeys.verify")((key: Redacted.Redacted<string>) =>
        Effect.sync(() => Option.fromUndefinedOr(matchStatic(accepted, digestOf(Redacted.value(key)))))
      )
    })
  })
