import { createHash, timingSafeEqual } from "node:crypto"
import { Effect, Layer, Redacted } from "effect"
import { ApiKeys } from "../../ports/ApiKeys.ts"

// Hashing first gives equal-length buffers, so timingSafeEqual never leaks a key's length.
const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest()

/** Accepts exactly the given keys, compared in constant time. */
export const layer = (keys: ReadonlyArray<Redacted.Redacted<string>>): Layer.Layer<ApiKeys> =>
  Layer.sync(ApiKeys, () => {
    const accepted = keys.map((key) => digest(Redacted.value(key)))
    return ApiKeys.of({
      verify: Effect.fn("ApiKeys.verify")((key: Redacted.Redacted<string>) =>
        Effect.sync(() => {
          const presented = digest(Redacted.value(key))
          // Compare against every key, without stopping early, so timing says nothing about which matched.
          let ok = false
          for (const candidate of accepted) ok = timingSafeEqual(candidate, presented) || ok
          return ok
        })
      )
    })
  })
