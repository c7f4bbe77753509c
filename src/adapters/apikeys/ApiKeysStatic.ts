import { createHash, timingSafeEqual } from "node:crypto"
import { Effect, Layer, Option, Redacted } from "effect"
import { Caller } from "../../domain/keys/Caller.ts"
import { ApiKeys } from "../../ports/ApiKeys.ts"

// Hashing first gives equal-length buffers, so timingSafeEqual never leaks a key's length.
const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest()

/**
 * Accepts exactly the given keys, compared in constant time, each as a `write` caller.
 * A key's id is `env-` and the start of its digest: the same on every instance and
 * across restarts, and it says nothing about the key.
 */
export const layer = (keys: ReadonlyArray<Redacted.Redacted<string>>): Layer.Layer<ApiKeys> =>
  Layer.sync(ApiKeys, () => {
    const accepted = keys.map((key) => {
      const hash = digest(Redacted.value(key))
      return { hash, caller: new Caller({ keyId: `env-${hash.subarray(0, 6).toString("hex")}`, scope: "write" }) }
    })
    return ApiKeys.of({
      verify: Effect.fn("ApiKeys.verify")((key: Redacted.Redacted<string>) =>
        Effect.sync(() => {
          const presented = digest(Redacted.value(key))
          // Compare against every key, without stopping early, so timing says nothing about which matched.
          let found: Caller | undefined
          for (const candidate of accepted) {
            if (timingSafeEqual(candidate.hash, presented)) found = candidate.caller
          }
          return Option.fromUndefinedOr(found)
        })
      )
    })
  })
