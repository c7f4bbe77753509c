import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { InvalidInput } from "../../../src/domain/Errors.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { Pet } from "../../../src/domain/pets/Pet.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { PetTag } from "../../../src/domain/pets/PetTag.ts"

const decodeNewPet = Schema.decodeUnknownResult(NewPet)
const message = (input: unknown) => {
  const result = decodeNewPet(input)
  assert.isTrue(Result.isFailure(result))
  return Result.isFailure(result) ? InvalidInput.fromIssue(result.failure.issue, "body").message : ""
}

describe("NewPet and Pet", () => {
  it("keeps an omitted status omitted: no default is invented", () => {
    const result = decodeNewPet({ name: "Rex", categoryId: 1n })
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) assert.isFalse("status" in result.success)
  })

  it("accepts every PetStatus and nothing else", () => {
    for (const status of ["available", "pending", "sold"]) {
      assert.isTrue(Result.isSuccess(decodeNewPet({ name: "Rex", categoryId: 1n, status })))
    }
    assert.strictEqual(
      message({ name: "Rex", categoryId: 1n, status: "lost" }),
      `status: must be one of "available", "pending", "sold"`
    )
    assert.strictEqual(
      message({ name: "Rex", categoryId: 1n, status: null }),
      `status: must be one of "available", "pending", "sold"`
    )
  })

  it("takes tags in the order given, none when omitted, and refuses a bad, repeated or eleventh tag", () => {
    const decoded = decodeNewPet({ name: "Rex", categoryId: 1n, tags: ["young", "cat"] })
    assert.deepStrictEqual(Result.isSuccess(decoded) ? decoded.success.tags : undefined, ["young", "cat"].map((tag) => PetTag.make(tag)))
    const omitted = decodeNewPet({ name: "Rex", categoryId: 1n })
    assert.deepStrictEqual(Result.isSuccess(omitted) ? omitted.success.tags : undefined, [])
    assert.deepStrictEqual(new NewPet({ name: PetName.make("Rex"), categoryId: CategoryId.make(1n) }).tags, [])
    assert.strictEqual(message({ name: "Rex", categoryId: 1n, tags: ["Cat"] }), "tags[0]: must be a lowercase slug: 1 to 32 of a-z, 0-9 and '-', not starting with '-'")
    assert.strictEqual(message({ name: "Rex", categoryId: 1n, tags: ["cat", "cat"] }), "tags: must not hold the same tag twice")
    assert.strictEqual(
      message({ name: "Rex", categoryId: 1n, tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }),
      "tags: must hold at most 10 tags"
    )
    assert.strictEqual(message({ name: "Rex", categoryId: 1n, tags: "cat" }), "tags: expected an array")
  })

  it("names the missing field, and the whole value when it is not an object", () => {
    assert.strictEqual(message({ categoryId: 1n }), "name: is required")
    assert.strictEqual(message({ name: "Rex" }), "categoryId: is required")
    assert.strictEqual(message([]), "body: expected an object")
    assert.strictEqual(message("Rex"), "body: expected an object")
  })

  it("a Pet is a NewPet plus an id and a version from 1", () => {
    const pet = Schema.decodeUnknownSync(Pet)({ id: 7n, name: "Rex", categoryId: 1n, status: "sold", version: 1 })
    assert.deepStrictEqual(Object.keys(pet).sort(), ["categoryId", "id", "name", "status", "tags", "version"])
    assert.deepStrictEqual(pet.tags, [])
    assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(Pet)({ name: "Rex", categoryId: 1n, version: 1 })))
    assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(Pet)({ id: 7n, name: "Rex", categoryId: 1n, version: 0 })))
  })
})
