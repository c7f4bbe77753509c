import { createHash, pbkdf2Sync } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import * as ApiKeysStatic from "../../../src/adapters/apikeys/ApiKeysStatic.ts"
import { ApiKeys } from "../../../src/ports/keys/ApiKeys.ts"

const verify = (accepted: ReadonlyArray<string>, presented: string) =>
  Effect.flatMap(ApiKeys, (keys) => keys.verify(Redacted.make(presented))).pipe(
    Effect.map(Option.isSome),
    Effect.provide(ApiKeysStatic.layer(accepted.map((key) => Redacted.make(key))))
  )

describe("ApiKeysStatic", () => {
  it.effect("accepts each configured key exactly", () =>
    Effect.gen(function*() {
      assert.isTrue(yield* verify(["alpha", "beta"], "alpha"))
      assert.isTrue(yield* verify(["alpha", "beta"], "beta"))
    }))

  it.effect("refuses near misses: prefixes, extensions, case, whitespace, empty", () =>
    Effect.gen(function*() {
      for (const presented of ["alph", "alphaa", "ALPHA", " alpha", "", "alpha,beta"]) {
        assert.isFalse(yield* verify(["alpha", "beta"], presented), presented)
      }
    }))

  it.effect("with no keys configured, accepts nothing", () =>
    Effect.gen(function*() {
      assert.isFalse(yield* verify([], ""))
      assert.isFalse(yield* verify([], "anything"))
    }))

  it.effect("identifies each key as a write caller with a stable id that does not reveal the key", () =>
    Effect.gen(function*() {
      const callers = yield* Effect.all(["alpha", "beta", "alpha"].map((presented) =>
        Effect.flatMap(ApiKeys, (keys) => keys.verify(Redacted.make(presented))).pipe(
          Effect.map(Option.getOrThrow),
          Effect.provide(ApiKeysStatic.layer([Redacted.make("alpha"), Redacted.make("beta")]))
        )
      ))
      assert.deepStrictEqual(callers.map((caller) => caller.scope), ["write", "write", "write"])
      assert.strictEqual(callers[0]!.keyId, callers[2]!.keyId)
      assert.notStrictEqual(callers[0]!.keyId, callers[1]!.keyId)
      assert.match(callers[0]!.keyId, /^env-[0-9a-f]{12}$/)
      assert.notInclude(callers[0]!.keyId, "alpha")
      // Not the start of the key's SHA-256, which would let a weak key be guessed from its id at hashing speed.
      assert.notStrictEqual(callers[0]!.keyId, `env-${createHash("sha256").update("alpha").digest("hex").slice(0, 12)}`)
      assert.strictEqual(
        callers[0]!.keyId,
        `env-${pbkdf2Sync("alpha", "animal-store API_KEYS key id", 200_000, 6, "sha256").toString("hex")}`
      )
    }))
})
