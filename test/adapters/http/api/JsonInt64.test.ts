import { assert, describe, it } from "@effect/vitest"
import { Result, Schema, SchemaParser } from "effect"
import { HttpApi } from "effect/http-api"
import { Api } from "../../../../src/adapters/http/api/Api.ts"
import { validBodyDecode } from "../../../../src/adapters/http/api/JsonInt64.ts"

// Every JSON request body of the Api, as the router decodes it (an upload's bytes are not JSON).
const bodies = new Map<string, Schema.Top>()
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => {
    for (const [mediaType, payload] of endpoint.payload) {
      if (!mediaType.endsWith("json")) continue
      for (const schema of payload.schemas) bodies.set(endpoint.identifier, schema)
    }
  }
})

const utf8 = new TextEncoder()

// Bodies near the rules' edges: names of any string, int64 literals in and out of range,
// statuses valid or not, an ignored id, invalid UTF-8, too many values, broken JSON.
const Body = Schema.Tuple([
  Schema.String,
  Schema.Literals(["1", "0", "-1", "9007199254740993", "9223372036854775807", "9223372036854775808", "1.5", "\"7\""]),
  Schema.Literals(["available", "pending", "sold", "lost", "null", "none"]),
  Schema.Literals(["plain", "id", "bad-utf8", "many-values", "cut"])
])

const bytesOf = ([name, categoryId, status, shape]: typeof Body.Type): Uint8Array => {
  const fields = [
    `"name":${JSON.stringify(name)}`,
    `"categoryId":${categoryId}`,
    ...(status === "none" ? [] : [`"status":${status === "null" ? "null" : JSON.stringify(status)}`]),
    ...(shape === "id" ? [`"id":"12"`] : []),
    ...(shape === "many-values" ? [`"pad":[${Array.from({ length: 120 }, (_, i) => i).join(",")}]`] : [])
  ]
  const text = `{${fields.join(",")}${shape === "cut" ? "" : "}"}`
  const bytes = utf8.encode(text)
  return shape === "bad-utf8" ? Uint8Array.of(0xff, ...bytes) : bytes
}

describe("validBodyDecode", () => {
  it("is there for every request body of the Api", () => {
    assert.isAbove(bodies.size, 2)
    for (const [operation, body] of bodies) assert.isDefined(validBodyDecode(body), operation)
  })

  for (const [operation, body] of bodies) {
    const full = SchemaParser.decodeUnknownResult(body as unknown as Schema.Decoder<unknown>)
    const valid = validBodyDecode(body)!
    it.prop(`${operation}: decodes exactly the bodies its schema decodes, to the same value`, [Body], ([fields]) => {
      const bytes = bytesOf(fields)
      const expected = full(bytes)
      const actual = valid(bytes)
      assert.strictEqual(Result.isSuccess(actual), Result.isSuccess(expected), JSON.stringify(fields))
      if (Result.isSuccess(actual) && Result.isSuccess(expected)) assert.deepStrictEqual(actual.success, expected.success)
    }, { arbitrary: { runs: 1000 } })
  }
})
