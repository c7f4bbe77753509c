/** The one contract of PhotoStore, run on every store (memory, embedded, PostgreSQL). */
import { assert, layer } from "@effect/vitest"
import { DateTime, Effect, type Layer, Option } from "effect"
import { PhotoStore } from "../../../src/ports/photos/PhotoStore.ts"

let n = 0
const key = (name: string) => `store-contract-${Date.now().toString(36)}-${++n}/${name}`
// Every byte value, and more than one page of a bytea's wire form.
const BYTES = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 256)

/**
 * Runs the contract against `store`, which must start empty. `writeTimeResolution`: how
 * finely the store keeps write times, in milliseconds (S3 keeps whole seconds); writes
 * the test tells apart by time are that much further apart.
 */
export const photoStoreContract = (
  name: string,
  store: Layer.Layer<PhotoStore, unknown>,
  options?: { readonly timeout?: number; readonly writeTimeResolution?: number }
) =>
  layer(store, { timeout: options?.timeout ?? 60_000, excludeTestServices: true })(`PhotoStore contract: ${name}`, (it) => {
    it.effect("bytes round-trip exactly; a missing key has none", () =>
      Effect.gen(function*() {
        const store = yield* PhotoStore
        const k = key("original")
        yield* store.put(k, BYTES)
        const read = yield* store.get(k)
        assert.isTrue(Option.isSome(read))
        assert.deepStrictEqual(Buffer.from(Option.getOrThrow(read)), Buffer.from(BYTES))
        assert.isTrue(Option.isNone(yield* store.get(key("never"))))
      }))

    it.effect("a key is written once: a second put keeps the first bytes", () =>
      Effect.gen(function*() {
        const store = yield* PhotoStore
        const k = key("thumb")
        yield* store.put(k, Uint8Array.of(1, 2, 3))
        yield* store.put(k, Uint8Array.of(9))
        assert.deepStrictEqual([...Option.getOrThrow(yield* store.get(k))], [1, 2, 3])
      }))

    it.effect("a put copies: changing the caller's buffer afterwards changes nothing stored", () =>
      Effect.gen(function*() {
        const store = yield* PhotoStore
        const k = key("medium")
        const buffer = Uint8Array.of(4, 5, 6)
        yield* store.put(k, buffer)
        buffer[0] = 0
        assert.deepStrictEqual([...Option.getOrThrow(yield* store.get(k))], [4, 5, 6])
      }))

    it.effect("delete removes the keys given, and ignores keys without bytes", () =>
      Effect.gen(function*() {
        const store = yield* PhotoStore
        const [a, b, c] = [key("a"), key("b"), key("c")]
        for (const k of [a, b, c]) yield* store.put(k, Uint8Array.of(1))
        yield* store.delete([a, c, key("none")])
        yield* store.delete([])
        assert.isTrue(Option.isNone(yield* store.get(a)))
        assert.isTrue(Option.isSome(yield* store.get(b)))
        assert.isTrue(Option.isNone(yield* store.get(c)))
      }))

    it.effect("olderThan lists the keys written before a time, oldest first, at most `limit`", () =>
      Effect.gen(function*() {
        const store = yield* PhotoStore
        const written: Array<string> = []
        for (let i = 0; i < 3; i++) {
          const k = key(`old-${i}`)
          yield* store.put(k, Uint8Array.of(i))
          written.push(k)
          yield* Effect.sleep(5 + (options?.writeTimeResolution ?? 0))
        }
        yield* Effect.sleep(20 + (options?.writeTimeResolution ?? 0))
        const cutoff = yield* DateTime.now
        yield* Effect.sleep("20 millis")
        const fresh = key("fresh")
        yield* store.put(fresh, Uint8Array.of(9))
        const old = yield* store.olderThan(cutoff, 1000)
        assert.deepStrictEqual(old.filter((k) => written.includes(k)), written)
        assert.notInclude(old, fresh)
        const firstTwo = yield* store.olderThan(cutoff, 2)
        assert.strictEqual(firstTwo.length, 2)
        // Everything written before the cutoff is older than the last of the three.
        assert.isTrue(old.indexOf(written[0]!) < old.indexOf(written[2]!))
      }))
  })
