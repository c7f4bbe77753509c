import { assert, layer } from "@effect/vitest"
import { Arbitrary, Effect, type Layer, Result, Schema } from "effect"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { PetChanged } from "../../../src/domain/Errors.ts"
import { INT64_MAX, INT64_MIN } from "../../../src/domain/Int64.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import type { Pet } from "../../../src/domain/pets/Pet.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { applyPatch, PetPatch } from "../../../src/domain/pets/PetPatch.ts"
import { FIRST_VERSION, nextVersion, PetVersion } from "../../../src/domain/pets/PetVersion.ts"
import { PAGE_LIMIT_MAX } from "../../../src/domain/paging/PageLimit.ts"
import { PetStatus } from "../../../src/domain/pets/PetStatus.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"

export interface ContractOptions {
  /** Property runs per property; the SQL stores use fewer to keep the suite quick. */
  readonly runs: number
  /** Vitest timeout per test, in milliseconds. */
  readonly timeout?: number
}

const Batch = Schema.Array(NewPet).check(Schema.isMaxLength(25))
const Limit = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10 }))
const StatusFilter = Schema.UndefinedOr(PetStatus)

// What happens to one pet of a batch after its create: nothing, a patch, or a delete.
const Change = Schema.Union([Schema.Literal("keep"), Schema.Literal("delete"), PetPatch])
const Changes = Schema.Array(Schema.Struct({ pet: NewPet, change: Change })).check(Schema.isMaxLength(20))

const createAll = (pets: ReadonlyArray<NewPet>) =>
  Effect.gen(function*() {
    const repo = yield* PetRepository
    return yield* Effect.forEach(pets, repo.create)
  })

// Every pet created after this id is one the running property made: the suite is the
// store's only writer and ids only grow, so `after` scopes a list to this run's pets.
const currentHighWater = Effect.gen(function*() {
  const repo = yield* PetRepository
  const probe = yield* repo.create(new NewPet({ name: PetName.make("probe"), categoryId: CategoryId.make(0n) }))
  return probe.id
})

/**
 * Every code point where stores could disagree with the domain on a name: Unicode white
 * space, controls (C0, DEL, C1) and format characters (zero-width, bidi, BOM), 254 in
 * all. Each must be refused by the domain, or stored and returned unchanged.
 */
const EDGE_CHARACTERS = Array.from({ length: 0x110000 }, (_, codePoint) => codePoint)
  .filter((codePoint) => codePoint < 0xd800 || codePoint > 0xdfff)
  .map((codePoint) => String.fromCodePoint(codePoint))
  .filter((character) => /[\p{White_Space}\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}]/u.test(character))

// Names made of edge characters, with or without an ordinary letter among them.
const EdgeName = Arbitrary.array(Arbitrary.schema(Schema.Literals([...EDGE_CHARACTERS, "x"])), {
  minLength: 1,
  maxLength: 6
}).pipe(Arbitrary.map((characters) => characters.join("")))

const decodeName = Schema.decodeUnknownResult(PetName)

// The domain decides; a store must then accept exactly what the domain accepted.
const storesAsTheDomainDecides = (name: string) =>
  Effect.gen(function*() {
    const decoded = decodeName(name)
    if (Result.isFailure(decoded)) return
    const repo = yield* PetRepository
    const created = yield* repo.create(new NewPet({ name: decoded.success, categoryId: CategoryId.make(1n) }))
    assert.strictEqual((yield* repo.get(created.id)).name, name)
  })

const matches = (status: PetStatus | undefined) => (pet: Pet) => status === undefined || pet.status === status

const pageThrough = (status: PetStatus | undefined, pageSize: number, after: PetId) =>
  Effect.gen(function*() {
    const repo = yield* PetRepository
    const seen: Array<Pet> = []
    let cursor = after
    for (;;) {
      const page = yield* repo.list({ limit: pageSize, status, after: cursor })
      assert.isAtMost(page.length, pageSize)
      seen.push(...page)
      if (page.length < pageSize) return seen
      cursor = page[page.length - 1]!.id
    }
  })

/**
 * The inventory as the catalogue itself says it: every pet in the store, listed page by
 * page, counted by status. What a store's kept counts must always equal.
 */
export const inventoryByListing = Effect.gen(function*() {
  const pets = yield* pageThrough(undefined, PAGE_LIMIT_MAX, PetId.make(0n))
  const count = (status: PetStatus | undefined) => pets.filter((pet) => pet.status === status).length
  return { available: count("available"), pending: count("pending"), sold: count("sold"), none: count(undefined) }
})

/**
 * The behaviour every PetRepository adapter must have. Registered once per
 * adapter with a layer that yields a fresh, empty store.
 */
export const petRepositoryContract = (
  name: string,
  store: Layer.Layer<PetRepository, unknown>,
  options: ContractOptions
) =>
  layer(store, { timeout: options.timeout ?? 60_000 })(`PetRepository contract: ${name}`, (it) => {
    const arbitrary = { runs: options.runs }
    const timeout = options.timeout ?? 60_000

    it.effect("assigns ids starting at 1 and increasing", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const first = yield* repo.create(new NewPet({ name: PetName.make("first"), categoryId: CategoryId.make(1n) }))
        const second = yield* repo.create(new NewPet({ name: PetName.make("second"), categoryId: CategoryId.make(1n) }))
        assert.strictEqual(first.id, 1n)
        assert.strictEqual(second.id, 2n)
      }))

    it.effect.prop("create then get returns exactly what was created", [NewPet], ([input]) =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const created = yield* repo.create(input)
        assert.strictEqual(created.name, input.name)
        assert.strictEqual(created.categoryId, input.categoryId)
        assert.strictEqual(created.status, input.status)
        assert.strictEqual("status" in created, input.status !== undefined)
        assert.deepStrictEqual(yield* repo.get(created.id), created)
      }), { timeout, arbitrary })

    it.effect.prop("int64 category ids round-trip exactly", [CategoryId], ([categoryId]) =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const created = yield* repo.create(new NewPet({ name: PetName.make("n"), categoryId }))
        assert.strictEqual((yield* repo.get(created.id)).categoryId, categoryId)
      }), { timeout, arbitrary })

    it.effect("int64 boundaries and values beyond 2^53 round-trip exactly", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        for (const value of [INT64_MIN, INT64_MAX, 9007199254740993n, -9007199254740993n, 0n]) {
          const created = yield* repo.create(new NewPet({ name: PetName.make("edge"), categoryId: CategoryId.make(value) }))
          assert.strictEqual((yield* repo.get(created.id)).categoryId, value)
        }
      }))

    it.effect("every white space, control and format character is refused by the domain or stored unchanged", () =>
      Effect.gen(function*() {
        assert.strictEqual(EDGE_CHARACTERS.length, 254)
        for (const character of EDGE_CHARACTERS) {
          yield* storesAsTheDomainDecides(character)
          yield* storesAsTheDomainDecides(`${character}x`)
        }
      }), timeout)

    it.effect.prop("names of edge characters are refused by the domain or stored unchanged", [EdgeName], ([name]) =>
      storesAsTheDomainDecides(name), { timeout, arbitrary })

    it.effect("get of an id that was never assigned fails with PetNotFound", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        for (const id of [0n, -1n, INT64_MIN, INT64_MAX]) {
          const error = yield* Effect.flip(repo.get(PetId.make(id)))
          assert.strictEqual(error._tag, "PetNotFound")
        }
      }))

    it.effect.prop(
      "list respects limit, status and ascending id order",
      [Batch, Limit, StatusFilter],
      ([batch, limit, status]) =>
        Effect.gen(function*() {
          const repo = yield* PetRepository
          const after = yield* currentHighWater
          const created = yield* createAll(batch)
          const listed = yield* repo.list({ limit, status, after })
          assert.deepStrictEqual(listed, created.filter(matches(status)).slice(0, limit))
        }),
      { timeout, arbitrary }
    )

    it.effect.prop(
      "paging with the last id as cursor covers every pet exactly once",
      [Batch, Limit, StatusFilter],
      ([batch, pageSize, status]) =>
        Effect.gen(function*() {
          const after = yield* currentHighWater
          const created = yield* createAll(batch)
          const seen = yield* pageThrough(status, pageSize, after)
          assert.deepStrictEqual(seen.map((p) => p.id), created.filter(matches(status)).map((p) => p.id))
        }),
      { timeout, arbitrary }
    )

    it.effect.prop("inventory counts the pets created in each status and without one", [Batch], ([batch]) =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const before = yield* repo.inventory
        yield* createAll(batch)
        const after = yield* repo.inventory
        const created = (status: PetStatus | undefined) => batch.filter((pet) => pet.status === status).length
        assert.deepStrictEqual(
          {
            available: after.available - before.available,
            pending: after.pending - before.pending,
            sold: after.sold - before.sold,
            none: after.none - before.none
          },
          { available: created("available"), pending: created("pending"), sold: created("sold"), none: created(undefined) }
        )
      }), { timeout, arbitrary })

    it.effect.prop("inventory equals the whole catalogue counted by status, after random creates", [Batch], ([batch]) =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        yield* Effect.forEach(batch, repo.create, { concurrency: 4 })
        assert.deepStrictEqual(yield* repo.inventory, yield* inventoryByListing)
      }), { timeout, arbitrary })

    it.effect("500 concurrent creates get 500 distinct ids, all readable", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const inputs = Array.from({ length: 500 }, (_, i) =>
          new NewPet({ name: PetName.make(`pet ${i}`), categoryId: CategoryId.make(BigInt(i)) }))
        const created = yield* Effect.forEach(inputs, repo.create, { concurrency: "unbounded" })
        assert.strictEqual(new Set(created.map((p) => p.id)).size, 500)
        const read = yield* Effect.forEach(created, (p) => repo.get(p.id), { concurrency: 50 })
        assert.deepStrictEqual(read, created)
      }))

    it.effect.prop("update applies the patch as the domain does, one version on, and get reads it back", [NewPet, PetPatch], ([input, patch]) =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const created = yield* repo.create(input)
        assert.strictEqual(created.version, FIRST_VERSION)
        const updated = yield* repo.update(created.id, patch, {})
        assert.deepStrictEqual(updated, applyPatch(created, patch))
        assert.strictEqual(updated.version, nextVersion(created.version))
        assert.strictEqual("status" in updated, updated.status !== undefined)
        assert.deepStrictEqual(yield* repo.get(created.id), updated)
      }), { timeout, arbitrary })

    it.effect("an update or delete whose precondition names another version is PetChanged and changes nothing", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const created = yield* repo.create(new NewPet({ name: PetName.make("cond"), categoryId: CategoryId.make(1n), status: "sold" }))
        const stale = { ifMatch: [PetVersion.make(created.version + 1), PetVersion.make(99)] }
        const patch = new PetPatch({ name: PetName.make("changed"), status: null })
        for (const refused of [repo.update(created.id, patch, stale), repo.delete(created.id, stale), repo.update(created.id, patch, { ifMatch: [] })]) {
          const error = yield* Effect.flip(refused)
          assert.instanceOf(error, PetChanged)
        }
        assert.deepStrictEqual(yield* repo.get(created.id), created)
        const updated = yield* repo.update(created.id, patch, { ifMatch: [PetVersion.make(5), created.version] })
        assert.strictEqual(updated.name, "changed")
        yield* repo.delete(created.id, { ifMatch: [updated.version] })
        assert.strictEqual((yield* Effect.flip(repo.get(created.id)))._tag, "PetNotFound")
      }))

    it.effect("a deleted pet is not found by get, update or delete, listed in no page, and counted nowhere", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const after = yield* currentHighWater
        const [kept, gone] = yield* createAll([
          new NewPet({ name: PetName.make("kept"), categoryId: CategoryId.make(1n), status: "pending" }),
          new NewPet({ name: PetName.make("gone"), categoryId: CategoryId.make(1n), status: "pending" })
        ])
        const before = yield* repo.inventory
        yield* repo.delete(gone!.id, {})
        assert.deepStrictEqual(yield* repo.inventory, { ...before, pending: before.pending - 1 })
        for (const refused of [repo.get(gone!.id), repo.update(gone!.id, new PetPatch({}), {}), repo.delete(gone!.id, {})]) {
          assert.strictEqual((yield* Effect.flip(refused))._tag, "PetNotFound")
        }
        assert.deepStrictEqual(yield* repo.list({ limit: 10, after }), [kept!])
        assert.deepStrictEqual(yield* repo.list({ limit: 10, after, status: "pending" }), [kept!])
        for (const id of [PetId.make(0n), PetId.make(INT64_MAX)]) {
          assert.strictEqual((yield* Effect.flip(repo.update(id, new PetPatch({}), {})))._tag, "PetNotFound")
          assert.strictEqual((yield* Effect.flip(repo.delete(id, {})))._tag, "PetNotFound")
        }
      }))

    it.effect.prop("after random creates, patches and deletes, lists hold exactly the pets left and the inventory counts them", [Changes], ([changes]) =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const after = yield* currentHighWater
        const left: Array<Pet> = []
        for (const { change, pet } of changes) {
          const created = yield* repo.create(pet)
          if (change === "delete") yield* repo.delete(created.id, {})
          else left.push(change === "keep" ? created : yield* repo.update(created.id, change, { ifMatch: [created.version] }))
        }
        assert.deepStrictEqual(yield* pageThrough(undefined, 7, after), left)
        for (const status of PetStatus.literals) {
          assert.deepStrictEqual(yield* pageThrough(status, 3, after), left.filter(matches(status)))
        }
        assert.deepStrictEqual(yield* repo.inventory, yield* inventoryByListing)
      }), { timeout, arbitrary })

    it.effect("50 concurrent updates with the same precondition: exactly one applies, 49 are PetChanged", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const created = yield* repo.create(new NewPet({ name: PetName.make("raced"), categoryId: CategoryId.make(1n) }))
        const outcomes = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => new PetPatch({ name: PetName.make(`racer ${i}`) })),
          (patch) => Effect.result(repo.update(created.id, patch, { ifMatch: [created.version] })),
          { concurrency: "unbounded" }
        )
        const applied = outcomes.filter(Result.isSuccess).map((outcome) => outcome.success)
        const refused = outcomes.filter(Result.isFailure).map((outcome) => outcome.failure)
        assert.strictEqual(applied.length, 1)
        assert.strictEqual(refused.length, 49)
        for (const error of refused) assert.instanceOf(error, PetChanged)
        assert.deepStrictEqual(yield* repo.get(created.id), applied[0])
      }), timeout)

    it.effect("reports ready", () => Effect.flatMap(PetRepository, (repo) => repo.ready))
  })
