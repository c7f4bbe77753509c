import { describe, expect, it } from "vitest"
import { MAX_BODY_VALUES } from "../../../src/adapters/http/api/PetsApi.ts"
import { MAX_BODY_BYTES } from "../../../src/adapters/http/server/policies/ErrorResponses.ts"
import { PET_NAME_MAX_CODE_POINTS } from "../../../src/domain/pets/PetName.ts"
import { AUTH, createPet, expectError, freshServer, JSON_AUTH, listAll, type TestServer } from "./TestServer.ts"

const post = (server: TestServer, body: string | Uint8Array, headers: Record<string, string> = JSON_AUTH) =>
  server.call("POST", "/v1/pets", { body, headers })

/** Two pets already stored, so "unchanged" means something. */
const seeded = async () => {
  const server = freshServer()
  await createPet(server, { name: "Rex", categoryId: 1, status: "available" })
  await createPet(server, { name: "Tom", categoryId: 2 })
  return { server, before: await listAll(server) }
}

/** Posts `body`, expects the given error, then checks the store did not change. */
const expectRejected = async (
  body: string | Uint8Array,
  status: number,
  code: string,
  mentions: ReadonlyArray<string> = [],
  headers: Record<string, string> = JSON_AUTH
) => {
  const { before, server } = await seeded()
  const result = await post(server, body, headers)
  expectError(result, status, code, ...mentions)
  expect(result.headers.get("location")).toBeNull()
  expect(await listAll(server)).toBe(before)
  // The next accepted pet takes the next id: the rejected request consumed nothing visible.
  const next = await createPet(server, { name: "Kit", categoryId: 3 })
  expect(next.id).toBe(3)
  return result
}

const body = (fields: Record<string, unknown>) => JSON.stringify(fields)
const rawBody = (name: string, categoryId: string) => `{"name":${name},"categoryId":${categoryId}}`

describe("POST /v1/pets (createPet)", () => {
  it("answers 201 with Location and the Pet body, and GET returns the same pet", async () => {
    const server = freshServer()
    const result = await post(server, body({ name: "Rex", categoryId: 7, status: "available" }))
    expect(result.status).toBe(201)
    expect(result.headers.get("content-type")).toBe("application/json")
    expect(result.headers.get("location")).toBe("/v1/pets/1")
    expect(result.text).toBe(`{"id":1,"name":"Rex","categoryId":7,"status":"available","tags":[],"version":1}`)
    const fetched = await server.call("GET", "/v1/pets/1", { headers: AUTH })
    expect(fetched.status).toBe(200)
    expect(fetched.text).toBe(result.text)
  })

  it("assigns ids from 1 upwards, each Location naming its pet", async () => {
    const server = freshServer()
    for (const id of [1, 2, 3, 4]) {
      const result = await post(server, body({ name: `pet ${id}`, categoryId: id * 10 }))
      expect(result.status).toBe(201)
      expect((result.json as { id: number }).id).toBe(id)
      expect(result.headers.get("location")).toBe(`/v1/pets/${id}`)
    }
  })

  it.each(["available", "pending", "sold"])("stores status %s", async (status) => {
    const server = freshServer()
    const result = await post(server, body({ name: "Rex", categoryId: 1, status }))
    expect(result.status).toBe(201)
    expect((result.json as { status: string }).status).toBe(status)
  })

  it("leaves an omitted status omitted, in the response, in GET and in the list", async () => {
    const server = freshServer()
    const result = await post(server, body({ name: "Tom", categoryId: 3 }))
    expect(result.status).toBe(201)
    expect(result.text).toBe(`{"id":1,"name":"Tom","categoryId":3,"tags":[],"version":1}`)
    expect(Object.keys(result.json as object)).not.toContain("status")
    const fetched = await server.call("GET", "/v1/pets/1", { headers: AUTH })
    expect(fetched.text).toBe(`{"id":1,"name":"Tom","categoryId":3,"tags":[],"version":1}`)
    expect(await listAll(server)).toBe(`[{"id":1,"name":"Tom","categoryId":3,"tags":[],"version":1}]`)
  })

  it("ignores a client-supplied id (and other unknown keys)", async () => {
    const server = freshServer()
    const result = await post(server, body({ id: 99, name: "Rex", categoryId: 1, colour: "brown" }))
    expect(result.status).toBe(201)
    expect(result.text).toBe(`{"id":1,"name":"Rex","categoryId":1,"tags":[],"version":1}`)
    expect(result.headers.get("location")).toBe("/v1/pets/1")
    expectError(await server.call("GET", "/v1/pets/99", { headers: AUTH }), 404, "not_found")
    const second = await post(server, body({ id: 1, name: "Tom", categoryId: 1 }))
    expect((second.json as { id: number }).id).toBe(2)
  })

  it.each([
    ["leading and trailing spaces", "  Rex  "],
    ["an emoji", "Rex 🐕‍🦺"],
    ["combining characters (not normalised)", "Zoe\u0301 e\u0301\u0300"],
    ["a single character", "x"],
    ["255 astral code points", "😀".repeat(255)],
    ["255 BMP characters", "é".repeat(255)],
    ["DEL and non-C0 characters", "a\u007fb\u0085c\u00a0d"],
    ["JSON-escaped quotes and backslashes", `"quoted" \\ back`]
  ])("stores a name with %s exactly as sent", async (_, name) => {
    const server = freshServer()
    const result = await post(server, body({ name, categoryId: 1 }))
    expect(result.status).toBe(201)
    expect((result.json as { name: string }).name).toBe(name)
    const fetched = await server.call("GET", "/v1/pets/1", { headers: AUTH })
    expect((fetched.json as { name: string }).name).toBe(name)
    expect(fetched.text).toBe(result.text)
  })

  describe("name rules (400 invalid_request naming name, store unchanged)", () => {
    it.each([
      ["empty", `""`],
      ["whitespace only", `"   "`],
      ["tabs and newlines only (whitespace and controls)", `" \\t\\n "`],
      ["256 astral code points", JSON.stringify("😀".repeat(256))],
      ["256 BMP characters", JSON.stringify("a".repeat(256))],
      ["NUL", `"Rex\\u0000"`],
      ["U+001F", `"Rex\\u001f"`],
      ["a newline", `"Rex\\nTom"`],
      ["a tab", `"Rex\\tTom"`],
      ["a lone high surrogate", `"Rex\\ud800"`],
      ["a lone low surrogate", `"\\udc00Rex"`],
      ["reversed surrogate pair", `"\\ude00\\ud83d"`],
      ["a number", "42"],
      ["null", "null"],
      ["an object", `{"first":"Rex"}`],
      ["an array", `["Rex"]`],
      ["a boolean", "true"]
    ])("refuses %s", async (_, name) => {
      await expectRejected(rawBody(name, "1"), 400, "invalid_request", ["name"])
    })

    it("refuses a missing name", async () => {
      await expectRejected(`{"categoryId":1}`, 400, "invalid_request", ["name"])
    })

    it("refuses invalid UTF-8 instead of storing replacement characters", async () => {
      const encode = (text: string) => [...new TextEncoder().encode(text)]
      const bytes = new Uint8Array([...encode(`{"categoryId":1,"name":"`), 0xff, 0xfe, ...encode(`"}`)])
      await expectRejected(bytes, 400, "invalid_request", ["UTF-8"])
    })
  })

  describe("categoryId", () => {
    it.each(["9007199254740993", "9223372036854775807", "-9223372036854775808", "0", "-1", "-9007199254740993"])(
      "round-trips %s exactly, in the raw response, GET and list",
      async (digits) => {
        const server = freshServer()
        const result = await post(server, rawBody(`"Rex"`, digits))
        expect(result.status).toBe(201)
        expect(result.text).toBe(`{"id":1,"name":"Rex","categoryId":${digits},"tags":[],"version":1}`)
        const fetched = await server.call("GET", "/v1/pets/1", { headers: AUTH })
        expect(fetched.text).toBe(`{"id":1,"name":"Rex","categoryId":${digits},"tags":[],"version":1}`)
        expect(await listAll(server)).toBe(`[{"id":1,"name":"Rex","categoryId":${digits},"tags":[],"version":1}]`)
      }
    )

    it.each([
      "9223372036854775808",
      "-9223372036854775809",
      "99999999999999999999999",
      "1.5",
      "1.0",
      "1e3",
      "1E3",
      "-0.0",
      `"12"`,
      "null",
      "true",
      "{}",
      "[1]"
    ])("refuses %s with 400 naming categoryId", async (value) => {
      await expectRejected(rawBody(`"Rex"`, value), 400, "invalid_request", ["categoryId"])
    })

    it("refuses a missing categoryId", async () => {
      await expectRejected(`{"name":"Rex"}`, 400, "invalid_request", ["categoryId"])
    })
  })

  it.each([`"unknown"`, `"AVAILABLE"`, `""`, "null", "1"])("refuses status %s with 400 naming status", async (status) => {
    await expectRejected(`{"name":"Rex","categoryId":1,"status":${status}}`, 400, "invalid_request", ["status"])
  })

  describe("body shape (400 invalid_request, store unchanged)", () => {
    it.each([
      ["malformed JSON", `{"name":"Rex",`],
      ["not JSON at all", "name=Rex&categoryId=1"],
      ["an empty body", ""],
      ["a JSON array", `[{"name":"Rex","categoryId":1}]`],
      ["a JSON string", `"Rex"`],
      ["a JSON number", "1"],
      ["JSON null", "null"],
      ["an empty object", "{}"],
      ["trailing garbage", `{"name":"Rex","categoryId":1} x`],
      ["two objects", `{"name":"Rex","categoryId":1}{"name":"Tom","categoryId":2}`]
    ])("refuses %s", async (_, payload) => {
      await expectRejected(payload, 400, "invalid_request")
    })
  })

  describe(`JSON values (at most ${MAX_BODY_VALUES})`, () => {
    // A create whose ignored `pad` key holds `count` values in all (the body counts as one more).
    const withValues = (count: number) =>
      `{"name":"Rex","categoryId":1,"pad":[${Array.from({ length: count - 4 }, () => "1").join(",")}]}`

    it(`accepts a create of exactly ${MAX_BODY_VALUES} values, ignoring what it does not know`, async () => {
      const server = freshServer()
      const result = await post(server, withValues(MAX_BODY_VALUES))
      expect(result.status).toBe(201)
      expect(result.text).toBe(`{"id":1,"name":"Rex","categoryId":1,"tags":[],"version":1}`)
    })

    it("counts values, not the brackets and commas inside strings, and an empty container as one", async () => {
      const server = freshServer()
      // The body, name, categoryId, pad and one string are 5 values; empty containers fill up the rest.
      const empties = Array.from({ length: MAX_BODY_VALUES - 5 }, (_, i) => i % 2 === 0 ? "[ ]" : "{}").join(",")
      const payload = `{"name":"a, [b] {c}, \\\" ,[","categoryId":1,"pad":[${empties}, "]]],,,{{"]}`
      const result = await post(server, payload)
      expect(result.status).toBe(201)
      await expectRejected(payload.replace(`"pad":[`, `"pad":[0,`), 400, "invalid_request")
    })

    it.each([
      ["one value too many", withValues(MAX_BODY_VALUES + 1)],
      ["a long flat array of integers", `{"name":"Rex","categoryId":1,"pad":[${"1,".repeat(1500)}1]}`],
      ["arrays nested 1,500 deep", `{"name":"Rex","categoryId":1,"pad":${"[".repeat(1500)}${"]".repeat(1500)}}`],
      ["many keys", `{"name":"Rex","categoryId":1,${Array.from({ length: 200 }, (_, i) => `"k${i}":0`).join(",")}}`]
    ])("refuses %s with 400 naming the bound", async (_, payload) => {
      const result = await expectRejected(payload, 400, "invalid_request")
      expect((result.json as { message: string }).message).toContain(`more than ${MAX_BODY_VALUES} JSON values`)
    })
  })

  describe("content type", () => {
    it("accepts application/json; charset=utf-8", async () => {
      const server = freshServer()
      const result = await post(server, body({ name: "Rex", categoryId: 1 }), {
        ...AUTH,
        "content-type": "application/json; charset=utf-8"
      })
      expect(result.status).toBe(201)
      expect(result.text).toBe(`{"id":1,"name":"Rex","categoryId":1,"tags":[],"version":1}`)
    })

    it("refuses text/plain with 415 unsupported_media_type", async () => {
      await expectRejected(body({ name: "Rex", categoryId: 1 }), 415, "unsupported_media_type", [], {
        ...AUTH,
        "content-type": "text/plain"
      })
    })

    it.each(["application/x-www-form-urlencoded", "text/json", "application/jsonp", "application/json-seq"])(
      "refuses %s with 415",
      async (contentType) => {
        await expectRejected(body({ name: "Rex", categoryId: 1 }), 415, "unsupported_media_type", [], {
          ...AUTH,
          "content-type": contentType
        })
      }
    )

    it("refuses a body with no content type at all with 415", async () => {
      // A byte body: `new Request` adds no content type for it.
      await expectRejected(new TextEncoder().encode(body({ name: "Rex", categoryId: 1 })), 415, "unsupported_media_type", [], AUTH)
    })

    it("checks the content type before the body: text/plain with a malformed body is 415", async () => {
      await expectRejected("{bad", 415, "unsupported_media_type", [], { ...AUTH, "content-type": "text/plain" })
    })
  })

  describe(`size limit (${MAX_BODY_BYTES} bytes)`, () => {
    // A valid NewPet padded with an ignored key to exactly `size` bytes.
    const paddedTo = (size: number) => {
      const head = `{"name":"Rex","categoryId":1,"pad":"`
      const tail = `"}`
      return head + "x".repeat(size - head.length - tail.length) + tail
    }
    // Every UTF-16 unit of a JSON string written as a \u escape: the longest way to write it.
    const escaped = (text: string) =>
      `"${Array.from({ length: text.length }, (_, i) => `\\u${text.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")}"`

    it("accepts the largest valid create, written as long as JSON allows, within the limit", async () => {
      const server = freshServer()
      const name = "😀".repeat(PET_NAME_MAX_CODE_POINTS)
      const payload = `{${escaped("name")}:${escaped(name)},${escaped("categoryId")}:-9223372036854775808,${
        escaped("status")
      }:${escaped("available")},${escaped("id")}:-9223372036854775808}`
      expect(new TextEncoder().encode(payload).byteLength).toBeLessThanOrEqual(MAX_BODY_BYTES)
      const result = await post(server, payload)
      expect(result.status).toBe(201)
      expect(result.text).toBe(`{"id":1,"name":"${name}","categoryId":-9223372036854775808,"status":"available","tags":[],"version":1}`)
    })

    it(`accepts a valid body of exactly ${MAX_BODY_BYTES} bytes`, async () => {
      const server = freshServer()
      const payload = paddedTo(MAX_BODY_BYTES)
      expect(new TextEncoder().encode(payload).byteLength).toBe(MAX_BODY_BYTES)
      const result = await post(server, payload)
      expect(result.status).toBe(201)
      expect(result.text).toBe(`{"id":1,"name":"Rex","categoryId":1,"tags":[],"version":1}`)
    })

    it(`refuses ${MAX_BODY_BYTES + 1} bytes with 413 payload_too_large`, async () => {
      await expectRejected(paddedTo(MAX_BODY_BYTES + 1), 413, "payload_too_large")
    })

    it("refuses a much larger body (1 MiB) with 413", async () => {
      await expectRejected(paddedTo(1024 * 1024), 413, "payload_too_large")
    })

    it("answers a body within the limit that is otherwise invalid with 400, not 413", async () => {
      const payload = `{"name":"${"x".repeat(MAX_BODY_BYTES - 40)}","categoryId":1}`
      await expectRejected(payload, 400, "invalid_request", ["name"])
    })
  })

  describe("tags", () => {
    it("stores them in the order given and answers them; none is []", async () => {
      const server = freshServer()
      const tagged = await post(server, body({ name: "Zoë", categoryId: 1, tags: ["young", "cat", "0-1"] }))
      expect(tagged.status).toBe(201)
      expect(tagged.text).toBe(`{"id":1,"name":"Zoë","categoryId":1,"tags":["young","cat","0-1"],"version":1}`)
      expect((await server.call("GET", "/v1/pets/1", { headers: AUTH })).text).toBe(tagged.text)
      expect((await post(server, body({ name: "Tom", categoryId: 1, tags: [] }))).text)
        .toBe(`{"id":2,"name":"Tom","categoryId":1,"tags":[],"version":1}`)
    })

    it.each([
      [["Cat"], "tags[0]", "lowercase slug"],
      [["-cat"], "tags[0]", "lowercase slug"],
      [["c".repeat(33)], "tags[0]", "lowercase slug"],
      [[""], "tags[0]", "lowercase slug"],
      [["ca t"], "tags[0]", "lowercase slug"],
      [["caté"], "tags[0]", "lowercase slug"],
      [["cat\u0000"], "tags[0]", "lowercase slug"],
      [["cat", "cat"], "tags", "same tag twice"],
      [Array.from({ length: 11 }, (_, i) => `t${i}`), "tags", "at most 10"],
      [[1], "tags[0]", "string"],
      ["cat", "tags", "array"],
      [null, "tags", "array"]
    ])("refuses tags %j with 400 naming %s, storing nothing", async (tags, where, why) => {
      await expectRejected(JSON.stringify({ name: "Rex", categoryId: 1, tags }), 400, "invalid_request", [where, why])
    })

    it("refuses a lone surrogate in a tag", async () => {
      await expectRejected(`{"name":"Rex","categoryId":1,"tags":["ca\\ud800"]}`, 400, "invalid_request", ["tags[0]"])
    })
  })
})
