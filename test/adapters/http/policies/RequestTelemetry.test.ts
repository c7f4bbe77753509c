/**
 * Request ids, metrics and readiness details, through the real router in-process.
 */
import { describe, expect, it } from "vitest"
import { AUTH, createPet, expectError, freshServer, JSON_AUTH, type TestServer } from "../TestServer.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The value of one series in a Prometheus text exposition, 0 when absent. */
const seriesValue = (exposition: string, series: string): number => {
  const line = exposition.split("\n").find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

const scrape = async (server: TestServer): Promise<string> => {
  const result = await server.call("GET", "/metrics")
  expect(result.status).toBe(200)
  expect(result.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return result.text
}

describe("X-Request-Id", () => {
  it.each([
    ["a success", "GET", "/v1/pets", AUTH, undefined, 200],
    ["a create", "POST", "/v1/pets", JSON_AUTH, `{"name":"Rex","categoryId":1}`, 201],
    ["a 400", "POST", "/v1/pets", JSON_AUTH, `{"name":""}`, 400],
    ["a 401", "GET", "/v1/pets", {}, undefined, 401],
    ["a 404 for a missing pet", "GET", "/v1/pets/9", AUTH, undefined, 404],
    ["a 404 for an unknown route", "GET", "/nowhere", {}, undefined, 404],
    ["a 405", "DELETE", "/v1/pets", AUTH, undefined, 405],
    ["a 413", "POST", "/v1/pets", JSON_AUTH, `{"name":"${"x".repeat(5000)}","categoryId":1}`, 413],
    ["a 415", "POST", "/v1/pets", AUTH, "{}", 415],
    ["health", "GET", "/healthz", {}, undefined, 200],
    ["the OpenAPI document", "GET", "/v1/openapi.json", {}, undefined, 200]
  ])("is on %s, a fresh UUID when the client sent none", async (_, method, path, headers, body, status) => {
    const server = freshServer()
    const result = await server.call(method, path, { headers, body })
    expect(result.status).toBe(status)
    expect(result.headers.get("x-request-id")).toMatch(UUID)
  })

  it("differs from request to request", async () => {
    const server = freshServer()
    const ids = new Set<string | null>()
    for (let i = 0; i < 20; i++) ids.add((await server.call("GET", "/healthz")).headers.get("x-request-id"))
    expect(ids.size).toBe(20)
  })

  it.each(["abc-123", "req_01HZX9:part/2+x=y@z.q", "a".repeat(128)])("honours the client's sane id %s", async (id) => {
    const server = freshServer()
    for (const [method, path, headers] of [["GET", "/v1/pets", AUTH], ["GET", "/v1/pets", {}], ["GET", "/x", {}]] as const) {
      const result = await server.call(method, path, { headers: { ...headers, "x-request-id": id } })
      expect(result.headers.get("x-request-id")).toBe(id)
    }
  })

  it.each(["", "a".repeat(129), "has space", "quote\"d", "semi;colon", "tab\tx", "ünïcode", "a, b"])(
    "replaces an id that is not sane: %j",
    async (id) => {
      const server = freshServer()
      const result = await server.call("GET", "/v1/pets", { headers: { ...AUTH, "x-request-id": id } })
      expect(result.status).toBe(200)
      expect(result.headers.get("x-request-id")).toMatch(UUID)
    }
  )
})

describe("GET /metrics", () => {
  it("counts requests by operation, method and status, times them, and counts rejections by reason", async () => {
    const server = freshServer()
    const before = await scrape(server)
    await createPet(server, { name: "Rex", categoryId: 1 })
    await createPet(server, { name: "Tom", categoryId: 2 })
    expect((await server.call("GET", "/v1/pets/1", { headers: AUTH })).status).toBe(200)
    expect((await server.call("GET", "/v1/pets/99", { headers: AUTH })).status).toBe(404)
    expect((await server.call("GET", "/v1/pets")).status).toBe(401)
    expect((await server.call("POST", "/v1/pets", { headers: AUTH, body: "{}" })).status).toBe(415)
    expect((await server.call("GET", "/no/such/route/42")).status).toBe(404)
    const after = await scrape(server)
    const delta = (series: string) => seriesValue(after, series) - seriesValue(before, series)

    expect(delta(`http_server_requests_total{operation="createPet",method="POST",status="201"}`)).toBe(2)
    expect(delta(`http_server_requests_total{operation="getPet",method="GET",status="200"}`)).toBe(1)
    expect(delta(`http_server_requests_total{operation="getPet",method="GET",status="404"}`)).toBe(1)
    expect(delta(`http_server_requests_total{operation="listPets",method="GET",status="401"}`)).toBe(1)
    expect(delta(`http_server_requests_total{operation="createPet",method="POST",status="415"}`)).toBe(1)
    // Raw paths never become labels: unknown routes share one series.
    expect(delta(`http_server_requests_total{operation="unmatched",method="GET",status="404"}`)).toBe(1)
    expect(after).not.toContain("/no/such/route/42")
    // Every answer of the operation is timed: the two creates and the 415.
    expect(delta(`http_server_request_duration_seconds_count{operation="createPet"}`)).toBe(3)
    expect(delta(`http_server_rejections_total{reason="unauthorized"}`)).toBe(1)
    expect(delta(`http_server_rejections_total{reason="unsupported_media_type"}`)).toBe(1)
    // A 404 is an answer, not a rejection.
    expect(after).not.toContain(`http_server_rejections_total{reason="not_found"}`)
    expect(seriesValue(after, "process_resident_memory_bytes")).toBeGreaterThan(0)
    expect(seriesValue(after, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0)
    expect(after).toContain("nodejs_eventloop_lag_p99_seconds ")
    expect(after).toContain("# TYPE http_server_request_duration_seconds histogram")
  })

  it("needs no key and ignores a wrong one; other methods are 405", async () => {
    const server = freshServer()
    expect((await server.call("GET", "/metrics", { headers: { authorization: "Bearer wrong" } })).status).toBe(200)
    const post = await server.call("POST", "/metrics")
    expectError(post, 405, "method_not_allowed")
    expect(post.headers.get("allow")).toBe("GET, HEAD")
  })

  it("is a JSON 404 when turned off, and then records no request", async () => {
    const off = freshServer(undefined, { metrics: false })
    const on = freshServer()
    const series = `http_server_requests_total{operation="getPet",method="GET",status="404"}`
    const before = seriesValue(await scrape(on), series)
    expectError(await off.call("GET", "/metrics"), 404, "not_found")
    expect((await off.call("GET", "/v1/pets/99", { headers: AUTH })).status).toBe(404)
    // Both servers write to the one default registry: only the server with metrics on counts.
    expect(seriesValue(await scrape(on), series)).toBe(before)
    expect((await on.call("GET", "/v1/pets/99", { headers: AUTH })).status).toBe(404)
    expect(seriesValue(await scrape(on), series)).toBe(before + 1)
  })
})

describe("X-Content-Type-Options and Cache-Control", () => {
  it.each([
    ["a list (fast route)", "GET", "/v1/pets", AUTH, undefined, 200],
    ["a create (fast route)", "POST", "/v1/pets", JSON_AUTH, `{"name":"Rex","categoryId":1}`, 201],
    ["an HttpApi route", "GET", "/v1/store/inventory", AUTH, undefined, 200],
    ["a 400", "POST", "/v1/pets", JSON_AUTH, `{"name":""}`, 400],
    ["a 401", "GET", "/v1/pets", {}, undefined, 401],
    ["a 404 for an unknown route", "GET", "/nowhere", {}, undefined, 404],
    ["a 405", "DELETE", "/v1/pets", AUTH, undefined, 405],
    ["health", "GET", "/healthz", {}, undefined, 200]
  ])("%s is nosniff and no-store", async (_, method, path, headers, body, status) => {
    const result = await freshServer().call(method, path, { headers, body })
    expect(result.status).toBe(status)
    expect(result.headers.get("x-content-type-options")).toBe("nosniff")
    expect(result.headers.get("cache-control")).toBe("no-store")
  })

  it.each(["/docs", "/v1/openapi.json"])("%s is nosniff and cacheable (it sets its own Cache-Control)", async (path) => {
    const result = await freshServer().call("GET", path)
    expect(result.headers.get("x-content-type-options")).toBe("nosniff")
    expect(result.headers.get("cache-control")).toBe("public, no-cache")
  })
})
