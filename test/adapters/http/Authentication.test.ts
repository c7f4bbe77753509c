import { describe, expect, it } from "vitest"
import { API_KEY, AUTH, createPet, expectError, freshServer, listAll, type TestServer } from "./TestServer.ts"

const CHALLENGE = `Bearer realm="animal-store"`
const INVALID_TOKEN_CHALLENGE = `Bearer realm="animal-store", error="invalid_token"`

const VALID_BODY = `{"name":"Rex","categoryId":1}`

/**
 * Every /v1 operation, as (label, status with a valid key, request); `auth` is the
 * Authorization header or none.
 */
const operations: ReadonlyArray<
  readonly [string, number, (server: TestServer, auth: Record<string, string>) => ReturnType<TestServer["call"]>]
> = [
  ["listPets", 200, (server, auth) => server.call("GET", "/v1/pets", { headers: auth })],
  ["listPets with a status filter", 200, (server, auth) =>
    server.call("GET", "/v1/pets?status=sold&limit=5", { headers: auth })],
  [
    "createPet",
    201,
    (server, auth) =>
      server.call("POST", "/v1/pets", { body: VALID_BODY, headers: { ...auth, "content-type": "application/json" } })
  ],
  ["getPet (existing)", 200, (server, auth) => server.call("GET", "/v1/pets/1", { headers: auth })],
  ["getPet (unknown)", 404, (server, auth) => server.call("GET", "/v1/pets/404", { headers: auth })],
  ["HEAD listPets", 200, (server, auth) => server.call("HEAD", "/v1/pets", { headers: auth })]
]

const withOnePet = async () => {
  const server = freshServer()
  await createPet(server, { name: "Existing", categoryId: 1 })
  return { server, before: await listAll(server) }
}

const expectUnauthorized = (result: Awaited<ReturnType<TestServer["call"]>>, challenge: string) => {
  expect(result.headers.get("www-authenticate")).toBe(challenge)
  if (result.text === "") {
    // HEAD: same status and headers, no body.
    expect(result.status).toBe(401)
    expect(result.headers.get("content-type")).toBe("application/json")
  } else {
    expectError(result, 401, "unauthorized")
  }
}

describe("authentication", () => {
  describe.each(operations)("%s", (_, okStatus, request) => {
    it("without Authorization: 401 unauthorized with the bare Bearer challenge", async () => {
      const { before, server } = await withOnePet()
      expectUnauthorized(await request(server, {}), CHALLENGE)
      expect(await listAll(server)).toBe(before)
    })

    it.each([
      ["a wrong key", `Bearer ${API_KEY}-wrong`],
      ["a prefix of the key", `Bearer ${API_KEY.slice(0, -1)}`],
      ["the key with different case", `Bearer ${API_KEY.toUpperCase()}`],
      ["the Basic scheme", `Basic ${Buffer.from(`user:${API_KEY}`).toString("base64")}`],
      ["the key without a scheme", API_KEY],
      ["another scheme with the key", `Token ${API_KEY}`],
      ["an empty Bearer credential", "Bearer "],
      ["the bare word Bearer", "Bearer"],
      ["an empty header", ""],
      ["no space after the scheme", `Bearer${API_KEY}`]
    ])("with %s: 401 with error=\"invalid_token\"", async (_, authorization) => {
      const { before, server } = await withOnePet()
      expectUnauthorized(await request(server, { authorization }), INVALID_TOKEN_CHALLENGE)
      expect(await listAll(server)).toBe(before)
    })

    it.each([
      ["Bearer", `Bearer ${API_KEY}`],
      ["lowercase bearer", `bearer ${API_KEY}`],
      ["uppercase BEARER", `BEARER ${API_KEY}`],
      ["several spaces before the key", `Bearer   ${API_KEY}`]
    ])("accepts the scheme written as %s (schemes are case-insensitive, RFC 9110 11.1)", async (_, authorization) => {
      const { server } = await withOnePet()
      const result = await request(server, { authorization })
      expect(result.status).toBe(okStatus)
      expect(result.headers.get("www-authenticate")).toBeNull()
    })
  })

  it("successful responses carry no WWW-Authenticate", async () => {
    const server = freshServer()
    const result = await server.call("GET", "/v1/pets", { headers: AUTH })
    expect(result.status).toBe(200)
    expect(result.headers.get("www-authenticate")).toBeNull()
  })

  it("the 401 messages say what is wrong without echoing the key", async () => {
    const server = freshServer()
    const missing = expectError(await server.call("GET", "/v1/pets"), 401, "unauthorized")
    const wrong = expectError(
      await server.call("GET", "/v1/pets", { headers: { authorization: "Bearer s3cret-guess" } }),
      401,
      "unauthorized"
    )
    expect(missing.message).not.toBe(wrong.message)
    expect(wrong.message).not.toContain("s3cret-guess")
  })

  describe("authentication comes before request validation", () => {
    const cases: ReadonlyArray<readonly [string, string, string, string | undefined, string | undefined]> = [
      ["a malformed JSON body", "POST", "/v1/pets", "{bad", "application/json"],
      ["an invalid body", "POST", "/v1/pets", `{"name":"","categoryId":1.5}`, "application/json"],
      ["an empty body", "POST", "/v1/pets", "", "application/json"],
      ["a text/plain body", "POST", "/v1/pets", VALID_BODY, "text/plain"],
      ["a body without content type", "POST", "/v1/pets", VALID_BODY, undefined],
      ["an invalid limit", "GET", "/v1/pets?limit=0", undefined, undefined],
      ["an invalid status", "GET", "/v1/pets?status=lost", undefined, undefined],
      ["an invalid cursor", "GET", "/v1/pets?cursor=zzz", undefined, undefined],
      ["a non-integer petId", "GET", "/v1/pets/abc", undefined, undefined],
      ["a petId beyond int64", "GET", "/v1/pets/9223372036854775808", undefined, undefined]
    ]

    it.each(cases)("%s without a key is 401 with the bare challenge", async (_, method, path, body, contentType) => {
      const { before, server } = await withOnePet()
      const result = await server.call(method, path, {
        body,
        headers: contentType === undefined ? {} : { "content-type": contentType }
      })
      expectError(result, 401, "unauthorized")
      expect(result.headers.get("www-authenticate")).toBe(CHALLENGE)
      expect(await listAll(server)).toBe(before)
    })

    it.each(cases)("%s with a wrong key is 401 invalid_token", async (_, method, path, body, contentType) => {
      const { before, server } = await withOnePet()
      const result = await server.call(method, path, {
        body,
        headers: {
          authorization: "Bearer wrong",
          ...(contentType === undefined ? {} : { "content-type": contentType })
        }
      })
      expectError(result, 401, "unauthorized")
      expect(result.headers.get("www-authenticate")).toBe(INVALID_TOKEN_CHALLENGE)
      expect(await listAll(server)).toBe(before)
    })

    it("an oversized body of undeclared length without a key is 401, not 413", async () => {
      const server = freshServer()
      const body = `{"name":"Rex","categoryId":1,"pad":"${"x".repeat(70 * 1024)}"}`
      const result = await server.call("POST", "/v1/pets", { body, headers: { "content-type": "application/json" } })
      expectError(result, 401, "unauthorized")
      expect(result.headers.get("www-authenticate")).toBe(CHALLENGE)
    })

    it("a declared Content-Length over the limit is 413 before authentication: the body is never read", async () => {
      const server = freshServer()
      const body = `{"name":"Rex","categoryId":1,"pad":"${"x".repeat(70 * 1024)}"}`
      const result = await server.call("POST", "/v1/pets", {
        body,
        headers: { "content-type": "application/json", "content-length": String(new TextEncoder().encode(body).length) }
      })
      expectError(result, 413, "payload_too_large")
      expect(result.headers.get("connection")).toBe("close")
    })
  })

  it.each([
    ["/healthz", "application/json"],
    ["/readyz", "application/json"],
    ["/v1/openapi.json", "application/json"],
    ["/docs", "text/html"]
  ])("%s needs no key, and ignores a wrong one", async (path, contentType) => {
    const server = freshServer()
    for (const headers of [{}, { authorization: "Bearer wrong" }]) {
      const result = await server.call("GET", path, { headers })
      expect(result.status).toBe(200)
      expect(result.headers.get("content-type")).toContain(contentType)
      expect(result.headers.get("www-authenticate")).toBeNull()
    }
  })
})
