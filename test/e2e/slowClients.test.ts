/**
 * Slow and abusive clients against the real process, over raw sockets:
 *
 * - a slowloris of a few hundred connections trickling their headers does not
 *   keep a normal client from being served, and every one of them is cut at the
 *   documented bound (10 s for the headers, checked every second) with a 408
 *   Error body — as is a connection that goes quiet half-way through its headers;
 * - one connection pipelining thousands of requests is served or cut off
 *   cleanly (whole responses, in order), the process survives, and everyone
 *   else is still served promptly meanwhile;
 * - a moderately pipelined connection is served in full.
 *
 * Latency figures are printed; the assertions are generous (a shared two-core
 * machine), but far below what a starved event loop gives.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Http from "node:http"
import { isErrorBody, RawConnection, rawRequest, type RawResponse } from "./RawHttp.ts"
import { killAll, removeTempDirs, type ServiceProcess, sleep, startService } from "./ServiceProcess.ts"

const API_KEY = "slow-clients-key"
/** The documented bound on receiving request headers. */
const HEADERS_TIMEOUT_MS = 10_000
/** How often the bound is checked, so the latest a connection can be cut. */
const CHECK_INTERVAL_MS = 1_000
/** Scheduling slack on a loaded two-core machine. */
const SLACK_MS = 1_500
/** What a normal client may wait for `/healthz` while abusive clients are at it. */
const SERVED_WITHIN_MS = 1_000

let service: ServiceProcess

beforeAll(async () => {
  service = await startService({ env: { API_KEYS: API_KEY, STORE: "memory" } })
})
afterAll(async () => {
  await killAll()
  removeTempDirs()
})

/** GET /healthz on a fresh connection; resolves with the milliseconds it took (rejects after 10 s). */
const timedHealthz = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const request = Http.get({ host: "127.0.0.1", port: service.port, path: "/healthz", agent: false, timeout: 10_000 }, (response) => {
      response.resume()
      response.on("end", () =>
        response.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`status ${response.statusCode}`)))
    })
    request.on("timeout", () => request.destroy(new Error("no answer within 10 s")))
    request.on("error", reject)
  })

/** Measures /healthz every `everyMs` until `done()` says stop. */
const probeLatency = async (done: () => boolean, everyMs: number): Promise<Array<number>> => {
  const latencies: Array<number> = []
  while (!done()) {
    latencies.push(await timedHealthz())
    await sleep(everyMs)
  }
  return latencies
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN

const describeLatencies = (latencies: ReadonlyArray<number>) => {
  const sorted = [...latencies].sort((a, b) => a - b)
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN).toFixed(1)
  return `${latencies.length} probes, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`
}

describe("slowloris", () => {
  it("300 trickling connections do not hold up a normal client, and each is cut at the headers bound with a 408", async () => {
    const trickling: Array<RawConnection> = []
    const quiet: Array<RawConnection> = []
    let stop = false
    // Opened over three seconds, so the cut-off times do not depend on one phase of the check timer.
    for (let i = 0; i < 300; i++) {
      const connection = await RawConnection.open(service.port)
      await connection.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
      trickling.push(connection)
      if (i % 20 === 0) {
        const idle = await RawConnection.open(service.port)
        await idle.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Half")
        quiet.push(idle)
      }
      if (i % 10 === 0) await sleep(100)
    }
    // One more header byte per connection every 200 ms.
    const trickle = (async () => {
      for (let n = 0; !stop; n++) {
        for (const connection of trickling) if (!connection.isClosed) connection.socket.write(n % 2 === 0 ? "X" : "y")
        await sleep(200)
      }
    })()
    const latencies = await probeLatency(() => [...trickling, ...quiet].every((c) => c.isClosed) || stop, 100)
      .finally(() => {
        stop = true
      })
    const closes = await Promise.all([...trickling, ...quiet].map((connection) => connection.waitForClose(40_000)))
    await trickle

    console.info(
      `[slowloris] ${trickling.length} trickling + ${quiet.length} quiet connections; normal client: ${describeLatencies(latencies)}; ` +
        `cut after ${Math.min(...closes.map((c) => c.closed.atMs)).toFixed(0)}–${Math.max(...closes.map((c) => c.closed.atMs)).toFixed(0)} ms`
    )
    expect(Math.max(...latencies)).toBeLessThan(SERVED_WITHIN_MS)
    for (const { responses, closed } of closes) {
      expect(responses.map((response) => response.status)).toEqual([408])
      expect(isErrorBody(responses[0] as RawResponse, "request_timeout"), responses[0]?.body).toBe(true)
      expect(closed.atMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100)
      expect(closed.atMs).toBeLessThan(HEADERS_TIMEOUT_MS + CHECK_INTERVAL_MS + SLACK_MS)
    }
    expect((await service.request("GET", "/v1/pets", { apiKey: API_KEY })).status).toBe(200)
  }, 60_000)
})

describe("pipelining", () => {
  it("30,000 requests on one connection: served or cut off cleanly, while others are served promptly", async () => {
    const flood = await RawConnection.open(service.port)
    const count = 30_000
    const request = rawRequest("GET", "/healthz")
    flood.socket.on("error", () => {})
    flood.socket.write(request.repeat(count))
    const started = performance.now()
    // Unserved, the flood keeps the event loop busy for seconds; two seconds of probes see it.
    const latencies = await probeLatency(() => performance.now() - started > 2_000, 50)
    flood.destroy()
    await flood.closed

    const answered = flood.responses
    console.info(
      `[pipelining] ${answered.length} of ${count} pipelined requests answered before ` +
        `${answered.length === count ? "the end" : "the connection was cut"}; others meanwhile: ${describeLatencies(latencies)}`
    )
    // Whole responses only, each a 200 for its own request, nothing half-written.
    expect(answered.every((response) => response.status === 200 && response.body === "{\"status\":\"ok\"}")).toBe(true)
    expect(flood.leftover).toBe("")
    expect(median(latencies)).toBeLessThan(SERVED_WITHIN_MS / 5)
    expect(Math.max(...latencies)).toBeLessThan(SERVED_WITHIN_MS)
    expect(service.exitStatus).toBeUndefined()
    expect((await service.request("GET", "/healthz")).status).toBe(200)
  }, 60_000)

  it("a modest pipeline (50 requests) is served in full, in order", async () => {
    const connection = await RawConnection.open(service.port)
    const paths = Array.from({ length: 50 }, (_, i) => i % 2 === 0 ? "/healthz" : `/v1/pets?limit=${(i % 5) + 1}`)
    await connection.write(paths.map((path) => rawRequest("GET", path, { headers: { authorization: `Bearer ${API_KEY}` } })).join(""))
    const responses = await connection.waitForResponses(50, 10_000)
    expect(responses.map((response) => response.status)).toEqual(paths.map(() => 200))
    // In order: health answers where health was asked, arrays where lists were.
    expect(responses.map((response) => Array.isArray(response.json))).toEqual(paths.map((path) => path !== "/healthz"))
    connection.destroy()
  })
})
