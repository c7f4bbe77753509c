import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { InvalidInput } from "../../../src/domain/Errors.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { Pet } from "../../../src/domain/pets/Pet.ts"

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

  it("names the missing field, and the whole value when it is not an object", () => {
    assert.strictEqual(message({ categoryId: 1n }), "name: is required")
    assert.strictEqual(message({ name: "Rex" }), "categoryId: is required")
    assert.strictEqual(message([]), "body: expected an object")
    assert.strictEqual(message("Rex"), "body: expected an object")
  })

  it("a Pet is a NewPet plus an id and a version from 1", () => {
    const pet = Schema.decodeUnknownSync(Pet)({ id: 7n, name: "Rex", categoryId: 1n, status: "sold", version: 1 })
    assert.deepStrictEqual(Object.keys(pet).sort(), ["categoryId", "id", "name", "status", "version"])
    assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(Pet)({ name: "Rex", categoryId: 1n, version: 1 })))
    assert.isTrue(Result.isFailure(Schema.decodeUnknownResult(Pet)({ id: 7n, name: "Rex", categoryId: 1n, version: 0 })))
  })
})
