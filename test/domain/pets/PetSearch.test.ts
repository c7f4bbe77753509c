import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { InvalidInput } from "../../../src/domain/Errors.ts"
import { searchKey, SearchText } from "../../../src/domain/pets/PetSearch.ts"

const decode = Schema.decodeUnknownResult(SearchText)
const message = (input: unknown) => {
  const result = decode(input)
  return Result.isFailure(result) ? InvalidInput.fromIssue(result.failure.issue, "q").message : "accepted"
}

describe("searchKey", () => {
  it("sets case, accents and compatibility forms aside", () => {
    assert.strictEqual(searchKey("Zoë"), "zoe")
    assert.strictEqual(searchKey("ZOË"), "zoe")
    assert.strictEqual(searchKey("Zoe\u0308"), "zoe")
    assert.strictEqual(searchKey("İpek"), "ipek")
    assert.strictEqual(searchKey("ｚｏｅ"), "zoe")
    assert.strictEqual(searchKey("ﬁfi"), "fifi")
    // A letter of its own, not a letter with an accent, stays.
    assert.strictEqual(searchKey("Ørsted"), "ørsted")
    assert.strictEqual(searchKey("100%_off"), "100%_off")
  })
})

describe("SearchText", () => {
  it("takes 2 to 64 characters, counted in code points", () => {
    assert.strictEqual(message("zo"), "accepted")
    assert.strictEqual(message("🐈🐈"), "accepted")
    assert.strictEqual(message("x".repeat(64)), "accepted")
    assert.strictEqual(message("z"), "q: must be 2 to 64 characters")
    assert.strictEqual(message("🐈"), "q: must be 2 to 64 characters")
    assert.strictEqual(message(""), "q: must be 2 to 64 characters")
    assert.strictEqual(message("x".repeat(65)), "q: must be 2 to 64 characters")
  })

  it("refuses NUL and other controls, lone surrogates, marks alone, and what is not a string", () => {
    assert.strictEqual(message("a\u0000b"), "q: must not contain NUL or other control characters (U+0000 to U+001F)")
    assert.strictEqual(message("ab\ud800"), "q: must not contain lone surrogates")
    assert.strictEqual(message("\u0301\u0308"), "q: must contain a character that is not an accent mark")
    assert.strictEqual(message(12), "q: expected a string")
  })
})
