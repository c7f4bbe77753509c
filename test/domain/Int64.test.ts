import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { CategoryId } from "../../src/domain/pets/CategoryId.ts"
import { InvalidInput } from "../../src/domain/Errors.ts"
import { INT64_MAX, INT64_MIN } from "../../src/domain/Int64.ts"
import { PetId } from "../../src/domain/pets/PetId.ts"

describe("int64 identifiers", () => {
  for (const [label, schema] of [["PetId", PetId], ["CategoryId", CategoryId]] as const) {
    const decode = Schema.decodeUnknownResult(schema)

    it(`${label} keeps every value in [-2^63, 2^63-1] exact`, () => {
      for (const value of [INT64_MIN, -9007199254740993n, -1n, 0n, 1n, 9007199254740993n, INT64_MAX]) {
        const result = decode(value)
        assert.isTrue(Result.isSuccess(result))
        if (Result.isSuccess(result)) assert.strictEqual(result.success, value)
      }
    })

    it(`${label} refuses values outside int64 and non-bigints`, () => {
      for (const value of [INT64_MIN - 1n, INT64_MAX + 1n, 2n ** 100n]) {
        const result = decode(value)
        assert.isTrue(Result.isFailure(result))
        if (Result.isFailure(result)) {
          assert.strictEqual(
            InvalidInput.fromIssue(result.failure.issue, "id").message,
            "id: must be an integer between -9223372036854775808 and 9223372036854775807"
          )
        }
      }
      for (const value of [1, 1.5, "1", null]) {
        const result = decode(value)
        assert.isTrue(Result.isFailure(result))
        if (Result.isFailure(result)) {
          assert.strictEqual(InvalidInput.fromIssue(result.failure.issue, "id").message, "id: expected an integer")
        }
      }
    })
  }
})
