/**
 * The docs page's script, run in a fresh V8 context of its own (its own JSON): a parsed
 * and unchanged value is written back with its integers above 2^53 exact, while the
 * parsed values stay plain numbers and everything else stays native.
 */
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "vitest"
import { script } from "../../../../src/adapters/http/server/process/ExactIntegerJson.ts"

const BODY = `{"id":3,"categoryId":9007199254740993,"tags":[-12345678901234567891],"price":1.5}`

/** Evaluates `code` in a context where the script has run. */
const onPage = (code: string): unknown => runInNewContext(`${script};\n${code}`, { BODY })

describe("ExactIntegerJson", () => {
  it("writes a parsed body back digit for digit, pretty-printed or not, as Scalar's response pane does", () => {
    expect(onPage(`JSON.stringify(JSON.parse(BODY), null, 2)`)).toBe(
      `{\n  "id": 3,\n  "categoryId": 9007199254740993,\n  "tags": [\n    -12345678901234567891\n  ],\n  "price": 1.5\n}`
    )
    expect(onPage(`JSON.stringify(JSON.parse(BODY))`)).toBe(BODY)
  })

  it("leaves the parsed values plain numbers, for code that reads them", () => {
    expect(onPage(`const v = JSON.parse(BODY); [typeof v.categoryId, v.categoryId, v.tags[0]]`)).toEqual([
      "number",
      9007199254740992,
      -12345678901234567000
    ])
  })

  it("writes a value changed since it was parsed as the native JSON.stringify does", () => {
    expect(onPage(`const v = JSON.parse(BODY); v.id = 4; JSON.stringify(v)`)).toBe(
      `{"id":4,"categoryId":9007199254740992,"tags":[-12345678901234567000],"price":1.5}`
    )
  })

  it("changes nothing for a caller's reviver or replacer, a part of the value, or a value that was not parsed", () => {
    expect(onPage(`JSON.stringify(JSON.parse(BODY, (k, v) => v))`)).toContain(`9007199254740992`)
    expect(onPage(`JSON.stringify(JSON.parse(BODY), (k, v) => v)`)).toContain(`9007199254740992`)
    expect(onPage(`JSON.stringify(JSON.parse(BODY).tags)`)).toBe(`[-12345678901234567000]`)
    expect(onPage(`JSON.stringify({ categoryId: 9007199254740993 })`)).toBe(`{"categoryId":9007199254740992}`)
    expect(onPage(`JSON.parse("9007199254740993")`)).toBe(9007199254740992)
  })

  it("keeps a large float and a safe 16-digit integer as the native functions write them", () => {
    expect(onPage(`JSON.stringify(JSON.parse('[1e20,12345678901234567.5,9007199254740991]'))`)).toBe(
      `[100000000000000000000,12345678901234568,9007199254740991]`
    )
  })
})
