/**
 * CORS through the real router in-process: off by default, and when origins are
 * configured, the preflight and the headers on every response (errors included).
 * CorsBrowser.test.ts checks the same with a real browser.
 */
import { describe, expect, it } from "vitest"
import * as StoreMemory from "../../../../src/adapters/memory/StoreMemory.ts"
import { AUTH, freshServer } from "../TestServer.ts"

const APP = "http://app.example.test"
const OTHER = "http://other.example.test"

const preflight = (origin: string, method = "POST") => ({
  headers: {
    origin,
    "access-control-request-method": method,
    "access-control-request-headers": "authorization,content-type,idempotency-key,x-request-id"
  }
})

const splitList = (value: string | null) => (value ?? "").split(",").map((item) => item.trim().toLowerCase())

describe("CORS", () => {
  it("is off by default: no CORS headers, and OPTIONS is a 405", async () => {
    const server = freshServer()
    const options = await server.call("OPTIONS", "/v1/pets", preflight(APP))
    expect(options.status).toBe(405)
    expect(options.headers.get("access-control-allow-origin")).toBeNull()
    const get = await server.call("GET", "/v1/pets", { headers: { ...AUTH, origin: APP } })
    expect(get.status).toBe(200)
    expect(get.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("answers the preflight of a configured origin: methods, request headers, max age", async () => {
    const server = freshServer(StoreMemory.layer, { cors: [APP, OTHER] })
    const result = await server.call("OPTIONS", "/v1/pets", preflight(APP))
    expect(result.status).toBe(204)
    expect(result.headers.get("access-control-allow-origin")).toBe(APP)
    expect(splitList(result.headers.get("vary"))).toContain("origin")
    expect(splitList(result.headers.get("access-control-allow-methods"))).toEqual(expect.arrayContaining(["get", "post", "patch", "delete"]))
    expect(splitList(result.headers.get("access-control-allow-headers"))).toEqual(
      expect.arrayContaining(["authorization", "content-type", "idempotency-key", "x-request-id"])
    )
    expect(Number(result.headers.get("access-control-max-age"))).toBeGreaterThan(0)
  })

  it("exposes the headers a client reads, on successes and errors alike", async () => {
    const server = freshServer(StoreMemory.layer, { cors: [APP, OTHER] })
    for (const headers of [{ ...AUTH, origin: OTHER }, { origin: OTHER }]) {
      const result = await server.call("GET", "/v1/pets", { headers })
      expect(result.headers.get("access-control-allow-origin")).toBe(OTHER)
      expect(splitList(result.headers.get("access-control-expose-headers"))).toEqual(expect.arrayContaining(
        ["link", "location", "deprecation", "sunset", "x-request-id", "retry-after", "ratelimit", "ratelimit-policy"]
      ))
    }
  })

  it("gives an origin that is not listed no allow-origin", async () => {
    const server = freshServer(StoreMemory.layer, { cors: [APP, OTHER] })
    const result = await server.call("OPTIONS", "/v1/pets", preflight("http://evil.example.test"))
    expect(result.headers.get("access-control-allow-origin")).toBeNull()
    const get = await server.call("GET", "/v1/pets", { headers: { ...AUTH, origin: "http://evil.example.test" } })
    expect(get.headers.get("access-control-allow-origin")).toBeNull()
  })

  it("with *, allows any origin", async () => {
    const server = freshServer(StoreMemory.layer, { cors: "*" })
    const result = await server.call("OPTIONS", "/v1/store/orders", preflight("http://anywhere.example.test"))
    expect(result.status).toBe(204)
    expect(result.headers.get("access-control-allow-origin")).toBe("*")
  })
})
