/**
 * What the real process answers to requests Node's HTTP parser refuses before the
 * application sees them, over raw sockets: every such answer is the documented
 * Error body with `Connection: close`, and a valid request that came before the
 * bad bytes on the same connection still gets its own, real answer first (its
 * effect is never hidden behind an error).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isErrorBody, RawConnection, rawRequest, type RawResponse } from "./RawHttp.ts"
import { isPet, killAll, listAll, removeTempDirs, type ServiceProcess, startService } from "./ServiceProcess.ts"

const API_KEY = "client-errors-key"
const AUTH = { authorization: `Bearer ${API_KEY}` }
const JSON_AUTH = { ...AUTH, "content-type": "application/json" }

let service: ServiceProcess

beforeAll(async () => {
  service = await startService({ env: { API_KEYS: API_KEY, STORE: "memory" } })
})
afterAll(async () => {
  await killAll()
  removeTempDirs()
})

/** Sends `bytes` on a fresh connection and collects everything until the server closes it. */
const exchange = async (bytes: string | Buffer, timeoutMs = 5_000) => {
  const connection = await RawConnection.open(service.port)
  await connection.write(bytes)
  return connection.waitForClose(timeoutMs)
}

const summary = (responses: ReadonlyArray<RawResponse>) =>
  responses.map((response) => `${response.status} ${response.body}`).join(" | ")

const storedNames = async () => (await listAll(service, API_KEY, { limit: 100 })).pets.map((pet) => pet.name)

describe("bytes after a valid request on the same connection", () => {
  it("a POST followed by one stray byte: the 201 for the stored pet, then the 400 Error body, then close", async () => {
    const name = `stray-${Date.now()}`
    const post = rawRequest("POST", "/v1/pets", { headers: JSON_AUTH, body: JSON.stringify({ name, categoryId: 7 }) })
    const { responses, closed } = await exchange(post + "x")

    expect(responses.map((response) => response.status), summary(responses)).toEqual([201, 400])
    const [created, refused] = responses as [RawResponse, RawResponse]
    expect(isPet(created.json) && created.json.name === name).toBe(true)
    expect(isErrorBody(refused, "invalid_request"), summary(responses)).toBe(true)
    expect(refused.headers["connection"]).toBe("close")
    expect(refused.headers["x-content-type-options"]).toBe("nosniff")
    expect(closed.error).toBeUndefined()
    // The pet the client was told about is the one stored, once.
    expect((await storedNames()).filter((stored) => stored === name)).toHaveLength(1)
  })

  it("two pipelined POSTs and then garbage: both 201s in order, then the 400", async () => {
    const names = [`pipelined-a-${Date.now()}`, `pipelined-b-${Date.now()}`]
    const posts = names.map((name) =>
      rawRequest("POST", "/v1/pets", { headers: JSON_AUTH, body: JSON.stringify({ name, categoryId: 8 }) })
    ).join("")
    const { responses } = await exchange(posts + "\u0000garbage\r\n\r\n")

    expect(responses.map((response) => response.status), summary(responses)).toEqual([201, 201, 400])
    expect(responses.slice(0, 2).map((response) => (response.json as { name?: string }).name)).toEqual(names)
    expect(isErrorBody(responses[2] as RawResponse, "invalid_request")).toBe(true)
    const stored = await storedNames()
    for (const name of names) expect(stored.filter((storedName) => storedName === name)).toHaveLength(1)
  })

  it("a POST whose chunked body turns out malformed is answered with the 400 Error body and nothing is stored", async () => {
    const name = `broken-chunks-${Date.now()}`
    const head = rawRequest("POST", "/v1/pets", { headers: { ...JSON_AUTH, "transfer-encoding": "chunked" } })
    const chunk = JSON.stringify({ name, categoryId: 9 }).slice(0, 10)
    const { responses } = await exchange(`${head}${chunk.length.toString(16)}\r\n${chunk}\r\nzz\r\n`)

    expect(responses.map((response) => response.status), summary(responses)).toEqual([400])
    expect(isErrorBody(responses[0] as RawResponse, "invalid_request")).toBe(true)
    expect(await storedNames()).not.toContain(name)
  })
})

const manyHeaders = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`x-header-${i}`, "v"]))

const refusals: ReadonlyArray<{ readonly what: string; readonly bytes: string; readonly status: number; readonly code: string }> = [
  { what: "an unknown method", bytes: "FROB /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n", status: 400, code: "invalid_request" },
  {
    what: "a malformed request line",
    bytes: "GET /v1/pets HTTP/1.1 trailing\r\nHost: x\r\n\r\n",
    status: 400,
    code: "invalid_request"
  },
  { what: "a bare line of garbage", bytes: "hello\r\n\r\n", status: 400, code: "invalid_request" },
  {
    what: "a control character in a header value",
    bytes: "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n",
    status: 400,
    code: "invalid_request"
  },
  { what: "no Host header (HTTP/1.1)", bytes: "GET /healthz HTTP/1.1\r\n\r\n", status: 400, code: "invalid_request" },
  {
    what: "headers over the size limit",
    bytes: rawRequest("GET", "/healthz", { headers: { "x-big": "a".repeat(20_000) } }),
    status: 431,
    code: "request_header_fields_too_large"
  },
  {
    what: "more header fields than the limit",
    bytes: rawRequest("GET", "/healthz", { headers: manyHeaders }),
    status: 431,
    code: "request_header_fields_too_large"
  },
  {
    what: "an expectation other than 100-continue",
    bytes: rawRequest("GET", "/healthz", { headers: { expect: "200-ok" } }),
    status: 417,
    code: "expectation_failed"
  },
  {
    what: "an oversized chunk extension",
    bytes: rawRequest("POST", "/v1/pets", { headers: { ...JSON_AUTH, "transfer-encoding": "chunked" } }) +
      `5;${"e".repeat(20_000)}\r\n`,
    status: 413,
    code: "payload_too_large"
  },
  { what: "CONNECT", bytes: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", status: 400, code: "invalid_request" }
]

describe("requests Node's parser refuses", () => {
  it.each(refusals)("$what: $status $code with the Error body and Connection: close", async ({ bytes, status, code }) => {
    const { responses, closed } = await exchange(bytes)
    expect(responses.map((response) => response.status), summary(responses)).toEqual([status])
    const response = responses[0] as RawResponse
    expect(isErrorBody(response, code), summary(responses)).toBe(true)
    expect(response.headers["connection"]).toBe("close")
    expect(response.headers["x-content-type-options"]).toBe("nosniff")
    expect(response.headers["cache-control"]).toBe("no-store")
    expect(closed.atMs).toBeLessThan(5_000)
  })

  it("the header-count limit leaves ordinary requests alone", async () => {
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`x-header-${i}`, "v"]))
    const connection = await RawConnection.open(service.port)
    await connection.write(rawRequest("GET", "/healthz", { headers: fifty }))
    const [response] = await connection.waitForResponses(1, 5_000)
    expect(response?.status).toBe(200)
    connection.destroy()
  })

  it("an Upgrade header is ignored: an ordinary answer, and the connection stays usable", async () => {
    const connection = await RawConnection.open(service.port)
    const upgrade = { connection: "upgrade", upgrade: "websocket", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" }
    await connection.write(rawRequest("GET", "/healthz", { headers: upgrade }))
    await connection.waitForResponses(1, 5_000)
    await connection.write(rawRequest("GET", "/v1/pets?limit=1", { headers: AUTH }))
    const responses = await connection.waitForResponses(2, 5_000)
    expect(responses.map((response) => response.status)).toEqual([200, 200])
    expect(Array.isArray(responses[1]?.json)).toBe(true)
    connection.destroy()
  })

  it("the service keeps serving afterwards", async () => {
    expect((await service.request("GET", "/healthz")).status).toBe(200)
    expect((await service.request("GET", "/v1/pets", { apiKey: API_KEY })).status).toBe(200)
  })
})
