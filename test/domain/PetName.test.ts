import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { InvalidInput } from "../../src/domain/Errors.ts"
import { PET_NAME_MAX_CODE_POINTS, PetName } from "../../src/domain/PetName.ts"

const decode = Schema.decodeUnknownResult(PetName)
const refusal = (input: unknown): string => {
  const result = decode(input)
  assert.isTrue(Result.isFailure(result), `expected ${JSON.stringify(input)} to be refused`)
  return Result.isFailure(result) ? InvalidInput.fromIssue(result.failure.issue, "name").message : ""
}

describe("PetName", () => {
  it.each([
    "Rex",
    " Rex ",
    "😀",
    "e\u0301",
    "\u00a0x",
    "\u007f",
    // Not ECMAScript white space, though some databases' [[:space:]] counts them.
    "\u0085",
    "\u200b",
    "\u180e",
    "\ufffd",
    "😀".repeat(PET_NAME_MAX_CODE_POINTS),
    "a".repeat(PET_NAME_MAX_CODE_POINTS)
  ])("accepts %j exactly as given", (name) => {
    const result = decode(name)
    assert.isTrue(Result.isSuccess(result))
    if (Result.isSuccess(result)) assert.strictEqual(result.success, name)
  })

  it("counts code points, not UTF-16 units", () => {
    // 255 astral characters are 510 UTF-16 units, still within the limit; 256 are not.
    assert.isTrue(Result.isSuccess(decode("😀".repeat(255))))
    assert.strictEqual(refusal("😀".repeat(256)), "name: must be at most 255 characters")
  })

  it.each([
    ["", "must contain at least one non-whitespace character"],
    ["   ", "must contain at least one non-whitespace character"],
    ["\u3000", "must contain at least one non-whitespace character"],
    ["\ufeff\u2028\u00a0", "must contain at least one non-whitespace character"],
    ["a\u0000b", "must not contain NUL or other control characters (U+0000 to U+001F)"],
    ["line\nbreak", "must not contain NUL or other control characters (U+0000 to U+001F)"],
    ["\u001f", "must not contain NUL or other control characters (U+0000 to U+001F)"],
    ["\ud800", "must not contain lone surrogates"],
    ["x\udc00", "must not contain lone surrogates"],
    ["a".repeat(256), "must be at most 255 characters"]
  ])("refuses %j: %s", (name, rule) => {
    assert.strictEqual(refusal(name), `name: ${rule}`)
  })

  it.each([42, null, undefined, {}, ["Rex"], true])("refuses the non-string %j", (input) => {
    assert.strictEqual(refusal(input), "name: expected a string")
  })
})
