/**
 * The request log of the real process: one JSON line per request with method,
 * path, status and duration, and no credential anywhere in its output.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { INFO, isRequestLine, type RequestLine } from "./LogLines.ts"
import { killAll, removeTempDirs, startService } from "./ServiceProcess.ts"

afterEach(killAll)
afterAll(removeTempDirs)

// Distinctive, so a search of the output cannot match anything by accident.
const API_KEY = `log-test-key-${Math.random().toString(36).slice(2)}-Zq9`
const WRONG_KEY = `wrong-key-${Math.random().toString(36).slice(2)}-Xv7`

describe("request logging", () => {
  it("writes one JSON line per request with method, path, status and duration, and never the key", async () => {
    const service = await startService({ env: { API_KEYS: `other-key,${API_KEY}`, STORE: "memory" } })
    const startupLines = service.logLines().length

    const sent: Array<{ method: string; path: string; status: number }> = []
    const call = async (method: string, path: string, options: Parameters<typeof service.request>[2], status: number) => {
      const result = await service.request(method, path, options)
      expect(result.status, `${method} ${path}: ${result.text}`).toBe(status)
      sent.push({ method, path: path.split("?")[0] ?? path, status })
      return result
    }
    const created = await call("POST", "/v1/pets", { apiKey: API_KEY, body: { name: "Rex", categoryId: 7 } }, 201)
    const id = (created.json as { id: number }).id
    await call("GET", `/v1/pets/${id}`, { apiKey: API_KEY }, 200)
    await call("GET", "/v1/pets?limit=5&status=available", { apiKey: API_KEY }, 200)
    await call("GET", "/v1/pets/999999", { apiKey: API_KEY }, 404)
    await call("POST", "/v1/pets", { apiKey: API_KEY, body: { name: "" } }, 400)
    await call("GET", "/v1/pets", {}, 401)
    await call("GET", "/v1/pets", { apiKey: WRONG_KEY }, 401)
    await call("GET", "/v1/pets", { headers: { authorization: `Basic ${Buffer.from(`u:${API_KEY}`).toString("base64")}` } }, 401)
    await call("GET", "/v1/pets", { headers: { authorization: API_KEY } }, 401)
    await call("GET", `/v1/pets?cursor=${API_KEY}`, { apiKey: API_KEY }, 400)
    await call("GET", "/no/such/route", { apiKey: API_KEY }, 404)
    await call("GET", "/readyz", {}, 200)
    // Concurrent requests are logged too, each once.
    await Promise.all(Array.from({ length: 20 }, () => call("GET", "/v1/pets", { apiKey: API_KEY }, 200)))

    expect(await service.stop()).toEqual({ code: 0, signal: null })

    const logs = service.logLines().slice(startupLines).filter(isRequestLine)
    const describeLog = (log: RequestLine) =>
      `${log.req.method} ${log.req.url.split("?")[0]} ${log.res.statusCode}`
    const describeSent = (request: (typeof sent)[number]) => `${request.method} ${request.path} ${request.status}`
    expect(logs.map(describeLog).sort()).toEqual(sent.map(describeSent).sort())
    for (const log of logs) {
      expect(log.level).toBe(INFO)
      expect(Math.abs(log.time - Date.now())).toBeLessThan(60_000)
      expect(log.pid).toBe(service.pid)
      expect(typeof log.hostname).toBe("string")
      expect(log.reqId).toMatch(/\S/)
      expect(typeof log.responseTime).toBe("number")
      expect(log.responseTime).toBeGreaterThanOrEqual(0)
      expect(log.responseTime).toBeLessThan(10_000)
    }
    // One JSON stream: every stdout line is a JSON log line, start-up and shutdown included.
    const other = service.stdout.split("\n").filter((line) => line !== "" && !line.startsWith("{"))
    expect(other).toEqual([])
    const lifecycle = service.logLines().filter((line) => ["starting", "ready", "stopping", "stopped"].includes(String(line["msg"])))
    expect(lifecycle.map((line) => line["msg"])).toEqual(["starting", "ready", "stopping", "stopped"])
    for (const line of service.logLines()) {
      expect(Object.keys(line).slice(0, 4), JSON.stringify(line)).toEqual(["level", "time", "pid", "hostname"])
      expect(typeof line["msg"]).toBe("string")
    }
    expect(lifecycle[0]).toMatchObject({ level: 30, store: "memory", address: service.baseUrl })
    expect(lifecycle[2]).toMatchObject({ signal: "SIGTERM" })
    expect(lifecycle[3]).toMatchObject({ "requests.drained": 0 })

    // No credential, presented or configured, anywhere.
    const everything = service.stdout + service.stderr
    expect(everything).not.toContain(API_KEY)
    expect(everything).not.toContain(WRONG_KEY)
    expect(everything).not.toContain("other-key")
    expect(everything.toLowerCase()).not.toContain("bearer")
    expect(everything.toLowerCase()).not.toContain("authorization")
    expect(service.stderr).toBe("")
  }, 30_000)

  it.each(["warn", "none"] as const)("LOG_LEVEL=%s: no request lines, and the service works the same", async (level) => {
    const service = await startService({ env: { API_KEYS: API_KEY, STORE: "memory", LOG_LEVEL: level } })
    expect((await service.request("POST", "/v1/pets", { apiKey: API_KEY, body: { name: "Quiet", categoryId: 1 } })).status)
      .toBe(201)
    expect((await service.request("GET", "/v1/pets", { apiKey: API_KEY })).status).toBe(200)
    expect((await service.request("GET", "/v1/pets")).status).toBe(401)
    expect(await service.stop()).toEqual({ code: 0, signal: null })
    expect(service.logLines().filter(isRequestLine)).toEqual([])
    expect(service.logLines().filter((line) => line["level"] === INFO)).toEqual([])
    expect(service.stdout + service.stderr).not.toContain(API_KEY)
  }, 30_000)
})
