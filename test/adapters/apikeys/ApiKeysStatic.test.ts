import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as ApiKeysStatic from "../../../src/adapters/apikeys/ApiKeysStatic.ts"
import { ApiKeys } from "../../../src/ports/ApiKeys.ts"

const verify = (accepted: ReadonlyArray<string>, presented: string) =>
  Effect.flatMap(ApiKeys, (keys) => keys.verify(Redacted.make(presented))).pipe(
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
})
