import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { fingerprintOf } from "../../../../src/adapters/idempotency/RequestFingerprint.ts"
import * as IdempotentCreatesMemory from "../../../../src/adapters/memory/idempotency/IdempotentCreatesMemory.ts"
import * as StoreMemory from "../../../../src/adapters/memory/StoreMemory.ts"
import { IdempotencyKey } from "../../../../src/domain/idempotency/IdempotencyKey.ts"
import { IdempotentRequest, placeOrderIdentity, StoredResponse } from "../../../../src/domain/idempotency/IdempotentRequest.ts"
import { PetId } from "../../../../src/domain/pets/PetId.ts"
import { CONTRACT_OPTIONS, idempotentCreatesContract } from "../../../ports/idempotency/IdempotentCreatesContract.ts"

idempotentCreatesContract("memory", StoreMemory.layerWith(CONTRACT_OPTIONS))

const requestFor = (key: string) =>
  new IdempotentRequest({
    keyId: "caller-a",
    key: IdempotencyKey.make(key),
    fingerprint: fingerprintOf(placeOrderIdentity(PetId.make(404n)))
  })

// An answer that stored nothing (the pet is missing), numbered by the create that gave it.
const refusalCounted = (calls: Ref.Ref<number>) =>
  Effect.map(Ref.updateAndGet(calls, (n) => n + 1), (n) => new StoredResponse({ status: 404, body: `{"call":${n}}` }))

describe("IdempotentCreatesMemory's cap on keys", () => {
  it.effect("past maxKeys the least recently used key is forgotten, and its next request creates again", () =>
    Effect.gen(function*() {
      const idempotent = IdempotentCreatesMemory.make({ maxKeys: 3 })
      const calls = yield* Ref.make(0)
      const run = (key: string) => idempotent.run(requestFor(key), refusalCounted(calls))
      for (const key of ["k1", "k2", "k3"]) yield* run(key)
      // A replay is a use: k1 is now the most recently used, k2 the least.
      assert.isTrue((yield* run("k1")).replayed)
      yield* run("k4")
      assert.strictEqual(yield* Ref.get(calls), 4)

      for (const key of ["k1", "k3", "k4"]) assert.isTrue((yield* run(key)).replayed, key)
      assert.strictEqual(yield* Ref.get(calls), 4)
      const evicted = yield* run("k2")
      assert.deepStrictEqual(evicted, { response: new StoredResponse({ status: 404, body: `{"call":5}` }), replayed: false })
      // Kept anew, it replays again.
      assert.deepStrictEqual(yield* run("k2"), { response: evicted.response, replayed: true })
    }))

  it.effect("the default cap is 10,000 keys", () =>
    Effect.gen(function*() {
      const idempotent = IdempotentCreatesMemory.make()
      const calls = yield* Ref.make(0)
      const run = (key: string) => idempotent.run(requestFor(key), refusalCounted(calls))
      for (let i = 0; i <= 10_000; i++) yield* run(`key-${i}`)
      assert.strictEqual(IdempotentCreatesMemory.MAX_KEYS, 10_000)
      assert.isTrue((yield* run("key-1")).replayed)
      assert.isFalse((yield* run("key-0")).replayed)
    }), 60_000)
})
