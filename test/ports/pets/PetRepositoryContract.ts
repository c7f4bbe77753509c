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
import type { PetQuery, TagCount } from "../../../src/domain/pets/PetQuery.ts"
import { searchKey, SearchText } from "../../../src/domain/pets/PetSearch.ts"
import { PetTag } from "../../../src/domain/pets/PetTag.ts"
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

// A few tags and names, so that random pets share tags and searches find some of them.
// The names hold accents, case and LIKE's own characters (`%`, `_`, `\`).
const SomeTag = Schema.Literals(["cat", "young", "tabby", "a-1"])
const SomeTags = Schema.Array(SomeTag).check(Schema.isMaxLength(3), Schema.isUnique())
const SomeName = Schema.Literals(["Zoë", "ZOE tabby", "zoé", "100%_off", "back\\slash", "İpek", "Tabby", "x"])
const SomeSearch = Schema.UndefinedOr(Schema.Literals(["zo", "ZOË", "tab", "%_", "0%", "\\s", "ck\\", "ip", "ｚｏ"]))
// What happens to a tagged pet after its create: nothing, a delete, new tags, or a new name.
const TaggedChange = Schema.Union([
  Schema.Literal("keep"),
  Schema.Literal("delete"),
  Schema.Struct({ tags: SomeTags }),
  Schema.Struct({ name: SomeName })
])
const TaggedPets = Schema.Array(Schema.Struct({
  name: SomeName,
  status: Schema.UndefinedOr(PetStatus),
  tags: SomeTags,
  change: TaggedChange
})).check(Schema.isMaxLength(20))
const TagFilter = Schema.Struct({ tags: SomeTags, q: SomeSearch, status: StatusFilter, pageSize: Limit })

const tagsOf = (tags: ReadonlyArray<string>) => tags.map((tag) => PetTag.make(tag))

// What a filtered list must hold, said plainly over the pets themselves.
const plainlyMatches = (query: Omit<PetQuery, "limit">) => (pet: Pet) =>
  (query.status === undefined || pet.status === query.status) &&
  (query.tags ?? []).every((tag) => pet.tags.includes(tag)) &&
  (query.q === undefined || searchKey(pet.name).includes(searchKey(query.q)))

const pageThroughQuery = (query: Omit<PetQuery, "limit">, pageSize: number) =>
  Effect.gen(function*() {
    const repo = yield* PetRepository
    const seen: Array<Pet> = []
    let cursor = query.after
    for (;;) {
      const page = yield* repo.list({ ...query, limit: pageSize, after: cursor })
      assert.isAtMost(page.length, pageSize)
      seen.push(...page)
      if (page.length < pageSize) return seen
      cursor = page[page.length - 1]!.id
    }
  })

/** Every tag of the store, paged through `tags` with pages of `pageSize`. */
const allTags = (pageSize: number) =>
  Effect.gen(function*() {
    const repo = yield* PetRepository
    const seen: Array<TagCount> = []
    let after: string | undefined
    for (;;) {
      const page = yield* repo.tags({ limit: pageSize, after })
      seen.push(...page)
      if (page.length < pageSize) return seen
      after = page[page.length - 1]!.tag
    }
  })

/** The tag counts as the catalogue itself says them: every pet listed, its tags counted, in code point order. */
const tagCountsByListing = Effect.gen(function*() {
  const counts = new Map<string, number>()
  for (const pet of yield* pageThrough(undefined, PAGE_LIMIT_MAX, PetId.make(0n))) {
    for (const tag of pet.tags) counts.set(tag, (counts.get(tag) ?? 0) + 1)
  }
  return [...counts].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([tag, pets]) => ({ tag, pets }))
})

// Creates the pets, then applies each one's change; the pets left, as the store answered them.
const createAndChange = (pets: typeof TaggedPets.Type) =>
  Effect.gen(function*() {
    const repo = yield* PetRepository
    const left: Array<Pet> = []
    for (const { change, name, status, tags } of pets) {
      const created = yield* repo.create(
        new NewPet({ name: PetName.make(name), categoryId: CategoryId.make(1n), tags: tagsOf(tags), ...(status === undefined ? {} : { status }) })
      )
      if (change === "delete") yield* repo.delete(created.id, {})
      else if (change === "keep") left.push(created)
      else {
        const patch = "tags" in change ? new PetPatch({ tags: tagsOf(change.tags) }) : new PetPatch({ name: PetName.make(change.name) })
        left.push(yield* repo.update(created.id, patch, {}))
      }
    }
    return left
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

    it.effect("tags are kept in the order given, every pet has a list ([] when none), and a patch replaces it", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const bare = yield* repo.create(new NewPet({ name: PetName.make("bare"), categoryId: CategoryId.make(1n) }))
        assert.deepStrictEqual(bare.tags, [])
        assert.deepStrictEqual((yield* repo.get(bare.id)).tags, [])
        const tagged = yield* repo.create(
          new NewPet({ name: PetName.make("tagged"), categoryId: CategoryId.make(1n), tags: tagsOf(["young", "cat", "a-1"]) })
        )
        assert.deepStrictEqual(tagged.tags, tagsOf(["young", "cat", "a-1"]))
        assert.deepStrictEqual((yield* repo.get(tagged.id)).tags, tagsOf(["young", "cat", "a-1"]))
        const renamed = yield* repo.update(tagged.id, new PetPatch({ name: PetName.make("renamed") }), {})
        assert.deepStrictEqual(renamed.tags, tagsOf(["young", "cat", "a-1"]))
        const retagged = yield* repo.update(tagged.id, new PetPatch({ tags: tagsOf(["cat", "old"]) }), {})
        assert.deepStrictEqual(retagged.tags, tagsOf(["cat", "old"]))
        assert.deepStrictEqual(yield* repo.get(tagged.id), retagged)
        const cleared = yield* repo.update(tagged.id, new PetPatch({ tags: [] }), {})
        assert.deepStrictEqual((yield* repo.get(tagged.id)).tags, [])
        assert.deepStrictEqual(cleared.tags, [])
      }))

    it.effect("a search ignores case and accents, and LIKE's own characters match only themselves", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const after = yield* currentHighWater
        const [zoe, , percent] = yield* createAll(["Zoë", "Zoo", "50%_off", "5000 off"].map((name) =>
          new NewPet({ name: PetName.make(name), categoryId: CategoryId.make(1n) })))
        const search = (q: string) =>
          Effect.map(repo.list({ limit: 10, after, q: SearchText.make(q) }), (pets) => pets.map((pet) => pet.name))
        assert.deepStrictEqual(yield* search("zoe"), [zoe!.name])
        assert.deepStrictEqual(yield* search("ZOË"), [zoe!.name])
        assert.deepStrictEqual(yield* search("%_"), [percent!.name])
        assert.deepStrictEqual(yield* search("0_"), [])
        assert.deepStrictEqual(yield* search("qq"), [])
      }))

    it.effect.prop(
      "a list filtered by tags, status and search, paged, holds exactly the pets a plain filter keeps",
      [TaggedPets, TagFilter],
      ([pets, filter]) =>
        Effect.gen(function*() {
          const after = yield* currentHighWater
          const left = yield* createAndChange(pets)
          const query = {
            after,
            status: filter.status,
            tags: tagsOf(filter.tags),
            q: filter.q === undefined ? undefined : SearchText.make(filter.q)
          }
          const listed = yield* pageThroughQuery(query, filter.pageSize)
          assert.deepStrictEqual(listed, left.filter(plainlyMatches(query)))
        }),
      { timeout, arbitrary }
    )

    it.effect.prop("the tags in use, paged, are every tag the listed pets carry, with their counts", [TaggedPets, Limit], ([pets, pageSize]) =>
      Effect.gen(function*() {
        yield* createAndChange(pets)
        assert.deepStrictEqual(yield* allTags(pageSize), yield* tagCountsByListing)
      }), { timeout, arbitrary })

    it.effect("a retired pet is found by no tag or search, and its tags are counted no more", () =>
      Effect.gen(function*() {
        const repo = yield* PetRepository
        const after = yield* currentHighWater
        const pet = yield* repo.create(
          new NewPet({ name: PetName.make("Retiring Rex"), categoryId: CategoryId.make(1n), tags: tagsOf(["only-rex"]) })
        )
        assert.deepStrictEqual(yield* repo.list({ limit: 10, after, tags: tagsOf(["only-rex"]) }), [pet])
        assert.deepStrictEqual((yield* repo.tags({ limit: 1, after: "only-re" }))[0], { tag: "only-rex", pets: 1 })
        yield* repo.delete(pet.id, {})
        assert.deepStrictEqual(yield* repo.list({ limit: 10, after, tags: tagsOf(["only-rex"]) }), [])
        assert.deepStrictEqual(yield* repo.list({ limit: 10, after, q: SearchText.make("rex") }), [])
        assert.notStrictEqual((yield* repo.tags({ limit: 1, after: "only-re" }))[0]?.tag, "only-rex")
      }))

    it.effect("reports ready", () => Effect.flatMap(PetRepository, (repo) => repo.ready))
  })
