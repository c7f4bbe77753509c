import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, type Layer, Ref } from "effect"
import { fingerprintOf } from "../../../src/adapters/idempotency/RequestFingerprint.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { StoreUnavailable } from "../../../src/domain/Errors.ts"
import { IdempotencyKey } from "../../../src/domain/idempotency/IdempotencyKey.ts"
import {
  createPetIdentity,
  IdempotentRequest,
  placeOrderIdentity,
  StoredResponse
} from "../../../src/domain/idempotency/IdempotentRequest.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { IdempotentCreates } from "../../../src/ports/idempotency/IdempotentCreates.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"

/** The tuning every store under this contract is built with: short, so the suite can watch keys expire. */
export const CONTRACT_OPTIONS = { retention: "2 seconds", inProgressWait: "300 millis" } as const
const RETENTION_MILLIS = 2_000

const petNamed = (name: string) => new NewPet({ name: PetName.make(name), categoryId: CategoryId.make(1n) })

let keys = 0
// A key of its own per test: the suite shares one store.
const freshKey = () => IdempotencyKey.make(`contract-${Date.now().toString(36)}-${++keys}`)

const requestFor = (pet: NewPet, key: IdempotencyKey, keyId = "caller-a") =>
  new IdempotentRequest({ keyId, key, fingerprint: fingerprintOf(createPetIdentity(pet)) })

// The create under test: a pet through the store's own PetRepository, counted, answered as its id.
const createCounted = (pet: NewPet, calls: Ref.Ref<number>) =>
  Effect.gen(function*() {
    yield* Ref.update(calls, (n) => n + 1)
    const created = yield* (yield* PetRepository).create(pet)
    return new StoredResponse({ status: 201, body: `{"id":${created.id}}`, location: `/v1/pets/${created.id}` })
  })

// A first run whose create has started and waits for `release`: the window a duplicate arrives in.
const startHeld = (
  idempotent: IdempotentCreates["Service"],
  request: IdempotentRequest,
  create: Effect.Effect<StoredResponse, StoreUnavailable, PetRepository>
) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const first = yield* Effect.forkChild(idempotent.run(
      request,
      Deferred.succeed(started, undefined).pipe(Effect.andThen(Deferred.await(release)), Effect.andThen(create))
    ))
    yield* Deferred.await(started)
    return { first, release }
  })

const idOf = (response: StoredResponse) => BigInt((JSON.parse(response.body) as { id: number }).id)

// How many pets named `name` the store holds (names are unique per test).
const petsNamed = (name: string) =>
  Effect.gen(function*() {
    const pets = yield* PetRepository
    const named: Array<bigint> = []
    let after = 0n
    while (true) {
      const page = yield* pets.list({ limit: 100, after: PetId.make(after) })
      for (const pet of page) if (pet.name === name) named.push(pet.id)
      if (page.length < 100) return named
      after = page[page.length - 1]!.id
    }
  })

/**
 * The behaviour every IdempotentCreates adapter must have, over the PetRepository of the
 * same store, built with {@link CONTRACT_OPTIONS}. Live clock (no TestClock): the waits and expiry are real.
 */
export const idempotentCreatesContract = (
  name: string,
  store: Layer.Layer<PetRepository | IdempotentCreates, unknown>,
  options: { readonly timeout?: number } = {}
) =>
  layer(store, { timeout: options.timeout ?? 60_000, excludeTestServices: true })(`IdempotentCreates contract: ${name}`, (it) => {
    it.effect("the same request again replays the first answer and creates nothing", () =>
      Effect.gen(function*() {
        const idempotent = yield* IdempotentCreates
        const calls = yield* Ref.make(0)
        const pet = petNamed("replayed once")
        const request = requestFor(pet, freshKey())
        const first = yield* idempotent.run(request, createCounted(pet, calls))
        const second = yield* idempotent.run(request, createCounted(pet, calls))
        assert.isFalse(first.replayed)
        assert.isTrue(second.replayed)
        assert.deepStrictEqual(second.response, first.response)
        assert.strictEqual(yield* Ref.get(calls), 1)
        assert.deepStrictEqual(yield* petsNamed("replayed once"), [idOf(first.response)])
      }))

    it.effect("answers without a Location and refusals (4xx) are kept and replayed as they were", () =>
      Effect.gen(function*() {
        const idempotent = yield* IdempotentCreates
        const request = new IdempotentRequest({
          keyId: "caller-a",
          key: freshKey(),
          fingerprint: fingerprintOf(placeOrderIdentity(PetId.make(404n)))
        })
        const refusal = new StoredResponse({ status: 404, body: `{"code":"not_found","message":"pet 404 not found","status":404}` })
        assert.deepStrictEqual(yield* idempotent.run(request, Effect.succeed(refusal)), { response: refusal, replayed: false })
        const again = yield* idempotent.run(request, Effect.die("must not run"))
        assert.deepStrictEqual(again, { response: refusal, replayed: true })
        assert.isFalse("location" in again.response)
      }))

    it.effect("the same key with another request is IdempotencyKeyReused and creates nothing", () =>
      Effect.gen(function*() {
        const idempotent = yield* IdempotentCreates
        const calls = yield* Ref.make(0)
        const key = freshKey()
        const pet = petNamed("reused first")
        yield* idempotent.run(requestFor(pet, key), createCounted(pet, calls))
        const other = petNamed("reused second")
        const refused = yield* Effect.flip(idempotent.run(requestFor(other, key), createCounted(other, calls)))
        assert.strictEqual(refused._tag, "IdempotencyKeyReused")
        // The same key for the other operation is another request too.
        const order = new IdempotentRequest({ keyId: "caller-a", key, fingerprint: fingerprintOf(placeOrderIdentity(PetId.make(1n))) })
        assert.strictEqual((yield* Effect.flip(idempotent.run(order, Effect.die("must not run"))))._tag, "IdempotencyKeyReused")
        assert.strictEqual(yield* Ref.get(calls), 1)
        assert.deepStrictEqual(yield* petsNamed("reused second"), [])
      }))

    it.effect("keys are per caller: the same key from two API keys makes two creates", () =>
      Effect.gen(function*() {
        const idempotent = yield* IdempotentCreates
        const calls = yield* Ref.make(0)
        const key = freshKey()
        const pet = petNamed("per caller")
        const a = yield* idempotent.run(requestFor(pet, key, "caller-a"), createCounted(pet, calls))
        const b = yield* idempotent.run(requestFor(pet, key, "caller-b"), createCounted(pet, calls))
        assert.isFalse(b.replayed)
        assert.notStrictEqual(idOf(a.response), idOf(b.response))
        // And each still replays its own.
        const againB = yield* idempotent.run(requestFor(pet, key, "caller-b"), createCounted(pet, calls))
        assert.deepStrictEqual(againB, { response: b.response, replayed: true })
        assert.strictEqual((yield* petsNamed("per caller")).length, 2)
      }))

    it.effect("a create that fails (503) is not kept: the retry creates", () =>
      Effect.gen(function*() {
        const idempotent = yield* IdempotentCreates
        const calls = yield* Ref.make(0)
        const pet = petNamed("after a failure")
        const request = requestFor(pet, freshKey())
        const failed = yield* Effect.flip(idempotent.run(request, Effect.fail(new StoreUnavailable({ message: "down" }))))
        assert.strictEqual(failed._tag, "StoreUnavailable")
        const retried = yield* idempotent.run(request, createCounted(pet, calls))
        assert.isFalse(retried.replayed)
        assert.deepStrictEqual(yield* petsNamed("after a failure"), [idOf(retried.response)])
      }))

    it.effect("a duplicate while the first is running waits for it and replays its answer", () =>
      Effect.gen(function*() {
        const idempotent = yield* IdempotentCreates
        const calls = yield* Ref.make(0)
        const pet = petNamed("waited for")
        const request = requestFor(pet, freshKey())
        const { first, release } = yield* startHeld(idempotent, request, createCounted(pet, calls))
        const second = yield* Effect.forkChild(idempotent.run(request, createCounted(pet, calls)))
        yield* Effect.sleep("50 millis")
        yield* Deferred.succeed(release, undefined)
        const [a, b] = [yield* Fiber.join(first), yield* Fiber.join(second)]
        assert.isFalse(a.replayed)
        assert.deepStrictEqual(b, { response: a.response, replayed: true })
        assert.strictEqual(yield* Ref.get(calls), 1)
      }))

    it.effect("a duplicate while the first is still running after the wait is IdempotencyKeyInUse", () =>
      Effect.gen(function*() {
        const idempotent = yield* IdempotentCreates
        const calls = yield* Ref.make(0)
        const pet = petNamed("in use")
        const request = requestFor(pet, freshKey())
        const { first, release } = yield* startHeld(idempotent, request, createCounted(pet, calls))
        const waited = Date.now()
        const inUse = yield* Effect.flip(idempotent.run(request, createCounted(pet, calls)))
        assert.strictEqual(inUse._tag, "IdempotencyKeyInUse")
        assert.isAtLeast(Date.now() - waited, 250)
        yield* Deferred.succeed(release, undefined)
        const done = yield* Fiber.join(first)
        assert.deepStrictEqual(yield* idempotent.run(request, createCounted(pet, calls)), { response: done.response, replayed: true })
        assert.strictEqual(yield* Ref.get(calls), 1)
      }))

    it.effect("a key is forgotten after the retention window: reused with any request, it creates", () =>
      Effect.gen(function*() {
        const idempotent = yield* IdempotentCreates
        const calls = yield* Ref.make(0)
        const key = freshKey()
        const pet = petNamed("expired first")
        const first = yield* idempotent.run(requestFor(pet, key), createCounted(pet, calls))
        yield* Effect.sleep(RETENTION_MILLIS + 200)
        const other = petNamed("expired second")
        const second = yield* idempotent.run(requestFor(other, key), createCounted(other, calls))
        assert.isFalse(second.replayed)
        assert.notStrictEqual(idOf(second.response), idOf(first.response))
        // Kept anew: the new request replays from now on.
        assert.deepStrictEqual(yield* idempotent.run(requestFor(other, key), createCounted(other, calls)), {
          response: second.response,
          replayed: true
        })
      }))
  })
