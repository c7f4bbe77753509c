import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { int64Reviver, parseInt64Json } from "../../src/domain/Int64Json.ts"

// The reference: JSON.parse with the reviver, its value or its error.
const reference = (text: string) => {
  try {
    return { value: JSON.parse(text, int64Reviver as never) as unknown }
  } catch (error) {
    return { error: String(error) }
  }
}

const fast = (text: string) => {
  try {
    return { value: parseInt64Json(text) }
  } catch (error) {
    return { error: String(error) }
  }
}

// Number literals of every kind the scan tells apart: short and long integers (past 2^53
// and past int64), negative ones, -0, fractions and exponents.
const literalOf = (n: number): string => {
  const whole = Math.trunc(Math.abs(n)) % 1_000_000
  const sign = n < 0 ? "-" : ""
  switch (Math.abs(Math.trunc(n * 7)) % 8) {
    case 0:
      return `${sign}${whole}`
    case 1:
      return `${sign}9007199254740993`
    case 2:
      return `${sign}123456789012345678901234567890`
    case 3:
      return `${sign}${whole}.0`
    case 4:
      return `${sign}${whole}e2`
    case 5:
      return `${sign}${whole}E-1`
    case 6:
      return "-0"
    default:
      return `${sign}999999999999999`
  }
}

// A JSON text of `value`, its numbers written as the literals above.
const textOf = (value: Schema.Json): string =>
  JSON.stringify(value, (_key, v: unknown) => typeof v === "number" ? JSON.rawJSON(literalOf(v)) : v)

describe("parseInt64Json", () => {
  it.prop("parses every JSON text as JSON.parse with int64Reviver does", [Schema.Json], ([value]) => {
    const text = textOf(value)
    assert.deepStrictEqual(fast(text), reference(text), text)
  }, { arbitrary: { runs: 2000 } })

  it("gives the same value or error on texts at the scan's edges", () => {
    for (
      const text of [
        "3",
        "-3",
        "-0",
        "0",
        "999999999999999",
        "9999999999999999",
        "-9223372036854775808",
        "9223372036854775807",
        "1.5",
        "1e3",
        "1E3",
        "[1,2.5,3]",
        "[true,false,null,1]",
        "{\"e\":1,\"E\":2,\"a.b\":3}",
        "{\"s\":\"1.5e3 \\\" 12345678901234567890\",\"n\":7}",
        "{\"__proto__\":1}",
        "{\"__proto__\":{\"x\":1}}",
        "{\"a\":[{\"b\":[-1,{\"c\":2}]}]}",
        " \t\n[ 1 , 2 ]\r\n",
        "",
        "[1,",
        "01",
        "-",
        "1.",
        "{\"a\":1}x",
        "\"\\u0000\"",
        "[\"\\ud800\"]"
      ]
    ) {
      assert.deepStrictEqual(fast(text), reference(text), text)
    }
  })

  it("keeps a __proto__ key an own property and changes no prototype", () => {
    const parsed = parseInt64Json("{\"__proto__\":5}") as Record<string, unknown>
    assert.strictEqual(Object.getPrototypeOf(parsed), Object.prototype)
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(parsed, "__proto__")?.value, 5n)
  })
})
