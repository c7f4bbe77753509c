import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { InvalidInput } from "../../../src/domain/Errors.ts"
import { PET_NAME_MAX_CODE_POINTS, PET_NAME_PATTERN, PetName } from "../../../src/domain/pets/PetName.ts"

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

  describe("PET_NAME_PATTERN, with minLength 1 and maxLength 255 code points (as in the OpenAPI document)", () => {
    // What a JSON Schema validator does with the three keywords: `u` regular expression, lengths in code points.
    const pattern = new RegExp(PET_NAME_PATTERN, "u")
    const documented = (name: string) => {
      const length = [...name].length
      return length >= 1 && length <= PET_NAME_MAX_CODE_POINTS && pattern.test(name)
    }
    const agrees = (name: string) =>
      assert.strictEqual(documented(name), Result.isSuccess(decode(name)), `disagreement on ${JSON.stringify(name)}`)

    it("accepts exactly what the checks accept: every BMP character alone, beside a letter and between blanks", () => {
      for (let code = 0; code <= 0xffff; code++) {
        const c = String.fromCharCode(code)
        for (const name of [c, `a${c}`, ` ${c} `]) agrees(name)
      }
    })

    it("accepts exactly what the checks accept: pseudo-random mixes of the interesting characters, all lengths", () => {
      const alphabet = ["a", "😀", " ", "\t", "\n", "\u0000", "\u001f", "\u007f", "\u0085", "\u00a0", "\u200b", "\u3000",
        "\ufeff", "\ud800", "\udc00", "\ud83d", "\ude00", "\u2028"]
      let seed = 42
      const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
      for (let i = 0; i < 5000; i++) {
        const length = next() % 260
        let name = ""
        for (let j = 0; j < length; j++) name += alphabet[next() % alphabet.length]
        agrees(name)
      }
      for (const name of ["a".repeat(255), "a".repeat(256), "😀".repeat(255), "😀".repeat(256), " ".repeat(255)]) agrees(name)
    })
  })
})
