import { describe, expect, it } from "vitest"
import { AUTH, expectError, freshServer, JSON_AUTH } from "./TestServer.ts"

const allowOf = (header: string | null) => (header ?? "").split(",").map((method) => method.trim()).sort()

describe("routing", () => {
  describe("405 method_not_allowed with Allow", () => {
    it.each([
      ["DELETE", "/v1/pets", ["GET", "HEAD", "POST"]],
      ["PUT", "/v1/pets", ["GET", "HEAD", "POST"]],
      ["PATCH", "/v1/pets", ["GET", "HEAD", "POST"]],
      ["OPTIONS", "/v1/pets", ["GET", "HEAD", "POST"]],
      ["PUT", "/v1/pets/1", ["DELETE", "GET", "HEAD", "PATCH"]],
      ["POST", "/v1/pets/1", ["DELETE", "GET", "HEAD", "PATCH"]],
      ["PUT", "/v1/pets/abc", ["DELETE", "GET", "HEAD", "PATCH"]],
      ["POST", "/healthz", ["GET", "HEAD"]],
      ["POST", "/v1/openapi.json", ["GET", "HEAD"]]
    ] as const)("%s %s", async (method, path, allowed) => {
      const server = freshServer()
      for (const headers of [AUTH, {}]) {
        const result = await server.call(method, path, {
          headers,
          ...(method === "PUT" || method === "PATCH" ? { body: "{}" } : {})
        })
        const body = expectError(result, 405, "method_not_allowed", method)
        expect(allowOf(result.headers.get("allow"))).toEqual([...allowed].sort())
        expect(body.message).not.toMatch(/\s{2}/)
      }
    })

    it("every method in Allow really is served", async () => {
      const server = freshServer()
      expect((await server.call("GET", "/v1/pets", { headers: AUTH })).status).toBe(200)
      expect((await server.call("HEAD", "/v1/pets", { headers: AUTH })).status).toBe(200)
      expect(
        (await server.call("POST", "/v1/pets", { body: `{"name":"Rex","categoryId":1}`, headers: JSON_AUTH })).status
      ).toBe(201)
      expect((await server.call("HEAD", "/v1/pets/1", { headers: AUTH })).status).toBe(200)
      expect((await server.call("HEAD", "/healthz")).status).toBe(200)
    })

    it("a 405 does not touch the store", async () => {
      const server = freshServer()
      await server.call("POST", "/v1/pets", { body: `{"name":"Rex","categoryId":1}`, headers: JSON_AUTH })
      await server.call("POST", "/v1/pets/1", { headers: JSON_AUTH, body: `{"name":"Tom","categoryId":2}` })
      await server.call("PUT", "/v1/pets/1", { headers: JSON_AUTH, body: `{"name":"Tom","categoryId":2}` })
      const result = await server.call("GET", "/v1/pets", { headers: AUTH })
      expect(result.text).toBe(`[{"id":1,"name":"Rex","categoryId":1,"tags":[],"version":1}]`)
    })
  })

  describe("404 not_found for unknown routes", () => {
    it.each(["/", "/nope", "/v1", "/v1/nope", "/v2/pets", "/v1/pets/1/owner", "/v1/petsx", "/store/orders", "/v1/store", "/v1/store/orderz"])(
      "GET %s",
      async (path) => {
        const server = freshServer()
        for (const headers of [AUTH, {}]) {
          const result = await server.call("GET", path, { headers })
          expectError(result, 404, "not_found")
          expect(result.headers.get("allow")).toBeNull()
        }
      }
    )

    it("POST to an unknown route is 404 as well", async () => {
      const server = freshServer()
      expectError(
        await server.call("POST", "/v1/animals", { body: `{"name":"Rex","categoryId":1}`, headers: JSON_AUTH }),
        404,
        "not_found"
      )
    })
  })

  describe("service endpoints", () => {
    it("GET /healthz answers 200 JSON without a key", async () => {
      const server = freshServer()
      const result = await server.call("GET", "/healthz")
      expect(result.status).toBe(200)
      expect(result.headers.get("content-type")).toBe("application/json")
      expect(result.json).toEqual({ status: "ok" })
    })

    it("GET /readyz answers 200 JSON without a key when the store is ready", async () => {
      const server = freshServer()
      const result = await server.call("GET", "/readyz")
      expect(result.status).toBe(200)
      expect(result.headers.get("content-type")).toBe("application/json")
      expect(result.json).toEqual({ status: "ready", checks: { store: "ok" } })
    })

    it("GET /v1/openapi.json answers 200 with an OpenAPI document without a key", async () => {
      const server = freshServer()
      const result = await server.call("GET", "/v1/openapi.json")
      expect(result.status).toBe(200)
      expect(result.headers.get("content-type")).toBe("application/json")
      expect((result.json as { openapi: string }).openapi).toMatch(/^3\.1\.\d+$/)
    })

    it("GET /docs answers 200 text/html without a key, with the Scalar script inlined (works offline)", async () => {
      const server = freshServer()
      const result = await server.call("GET", "/docs")
      expect(result.status).toBe(200)
      expect(result.headers.get("content-type")).toMatch(/^text\/html\b/)
      const html = result.text
      expect(html).toMatch(/^<!doctype html>/i)
      expect(html).toContain("<title>Animal Store</title>")
      // No external script, stylesheet or module is fetched: every <script> is inline.
      const scriptTags = html.match(/<script\b[^>]*>/gi) ?? []
      expect(scriptTags.length).toBeGreaterThan(0)
      for (const tag of scriptTags) expect(tag).not.toMatch(/\bsrc\s*=/i)
      expect(html).not.toMatch(/<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?\/\//i)
      expect(html).not.toMatch(/<script\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?\/\/(?:cdn\.jsdelivr\.net|unpkg\.com|cdn\.)/i)
      expect(html).not.toMatch(/\bimport\s*\(\s*["']https?:\/\//)
      // The Scalar bundle itself is inside the page (it is megabytes long).
      expect(html.length).toBeGreaterThan(500_000)
      expect(html).toMatch(/api-reference/)
    })
  })
})

describe("over-long path parameters", () => {
  const longId = "1".repeat(5000)

  it("are checked like any other: 401 without a key, then 400 naming the parameter", async () => {
    const server = freshServer()
    expectError(await server.call("GET", `/v1/pets/${longId}`), 401, "unauthorized")
    expectError(await server.call("GET", `/v1/pets/${longId}`, { headers: AUTH }), 400, "invalid_request", "petId")
  })

  it("an unknown long path gets a 404 whose message does not echo it whole", async () => {
    const server = freshServer()
    const result = await server.call("GET", `/${"x".repeat(5000)}`)
    const body = expectError(result, 404, "not_found")
    expect(body.message.length).toBeLessThan(300)
  })
})
