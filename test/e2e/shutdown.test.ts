/**
 * SIGTERM under keep-alive load, on the real process: new work stops at once.
 * Idle and half-sent connections are closed straight away, no new request is
 * taken, the requests already accepted finish (with `Connection: close`), and
 * the process exits as soon as they have — well inside the 10 s grace period.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest"
import * as Http from "node:http"
import { RawConnection, rawRequest } from "./RawHttp.ts"
import {
  initializedDataDir,
  isPet,
  killAll,
  removeTempDirs,
  type ServiceProcess,
  sleep,
  startService
} from "./ServiceProcess.ts"

const API_KEY = "shutdown-test-key"
const GRACE_MS = 10_000
const CLIENTS = 8

afterEach(killAll)
afterAll(async () => {
  await killAll()
  removeTempDirs()
})

interface Exchange {
  readonly client: number
  readonly sentAt: number
  readonly endedAt: number
  readonly status: number | undefined
  readonly connection: string | undefined
  readonly complete: boolean
  readonly error: string | undefined
}

/** One request on the keep-alive agent; resolves with what happened, never rejects. */
const exchange = (service: ServiceProcess, agent: Http.Agent, client: number, i: number): Promise<Exchange> =>
  new Promise((resolve) => {
    const post = i % 2 === 0
    const body = post ? JSON.stringify({ name: `keep-alive-${client}-${i}`, categoryId: 3 }) : undefined
    const sentAt = Date.now()
    const request = Http.request({
      agent,
      host: "127.0.0.1",
      port: service.port,
      method: post ? "POST" : "GET",
      path: post ? "/v1/pets" : "/v1/pets?limit=5",
      headers: {
        authorization: `Bearer ${API_KEY}`,
        ...(body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let complete = response.complete
        try {
          JSON.parse(text)
        } catch {
          complete = false
        }
        resolve({
          client,
          sentAt,
          endedAt: Date.now(),
          status: response.statusCode,
          connection: response.headers.connection,
          complete,
          error: undefined
        })
      })
      response.on("error", (error: NodeJS.ErrnoException) =>
        resolve({
          client,
          sentAt,
          endedAt: Date.now(),
          status: response.statusCode,
          connection: undefined,
          complete: false,
          error: error.code ?? error.message
        })
      )
    })
    request.on("error", (error: NodeJS.ErrnoException) =>
      resolve({
        client,
        sentAt,
        endedAt: Date.now(),
        status: undefined,
        connection: undefined,
        complete: false,
        error: error.code ?? error.message
      })
    )
    request.end(body)
  })

const storeEnv = async (store: "memory" | "embedded"): Promise<Record<string, string>> =>
  store === "memory"
    ? { API_KEYS: API_KEY, STORE: "memory" }
    : { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: await initializedDataDir() }

describe.each(["memory", "embedded"] as const)("SIGTERM under keep-alive load, %s store", (store) => {
  it("takes no new request after the signal, completes what it accepted, and exits long before the grace period", async () => {
    const service = await startService({ env: await storeEnv(store) })
    const agent = new Http.Agent({ keepAlive: true, maxSockets: CLIENTS })
    const exchanges: Array<Exchange> = []
    let signalledAt = Number.POSITIVE_INFINITY
    // Each client sends one request after another on its kept-alive connection until the service is gone.
    const client = async (id: number) => {
      for (let i = 0;; i++) {
        const result = await exchange(service, agent, id, i)
        exchanges.push(result)
        if (result.error === "ECONNREFUSED") return
        if (Date.now() - signalledAt > GRACE_MS + 2_000) return
      }
    }
    const clients = Promise.all(Array.from({ length: CLIENTS }, (_, id) => client(id)))
    await sleep(500)
    signalledAt = Date.now()
    service.signal("SIGTERM")
    const exit = await service.waitForExit(GRACE_MS + 5_000)
    const exitMs = Date.now() - signalledAt
    await clients
    agent.destroy()

    expect(exit, service.output).toEqual({ code: 0, signal: null })
    const signalled = signalledAt
    const before = exchanges.filter((e) => e.endedAt < signalled)
    const after = exchanges.filter((e) => e.endedAt >= signalled)
    // Load was on before the signal.
    expect(before.length).toBeGreaterThan(CLIENTS)
    // Every answer is whole, and a success or an explicit refusal.
    expect(exchanges.filter((e) => e.status !== undefined && !e.complete)).toEqual([])
    expect(after.filter((e) => e.status !== undefined && ![200, 201, 503].includes(e.status))).toEqual([])
    // What gets no answer was refused or cut before it was taken.
    for (const e of after.filter((e) => e.status === undefined)) {
      expect(["ECONNREFUSED", "ECONNRESET", "socket hang up", "EPIPE"]).toContain(e.error)
    }
    // The process needs a moment to see the signal; answers until then are ordinary. From
    // the first sign of the shutdown a client can see (a Connection: close, a closed or
    // refused connection) nothing sent afterwards is taken, by any client.
    const drainSeenAt = Math.min(
      ...after.filter((e) => e.error !== undefined || e.connection === "close").map((e) => e.endedAt)
    )
    expect(drainSeenAt - signalled).toBeLessThan(GRACE_MS / 2)
    const takenLater = after.filter((e) => e.sentAt > drainSeenAt && e.status !== undefined && e.status < 300)
    expect(takenLater).toEqual([])
    // Each client's work stops with its first sign of the shutdown.
    for (let id = 0; id < CLIENTS; id++) {
      const mine = after.filter((e) => e.client === id)
      const first = mine.findIndex((e) => e.error !== undefined || e.connection === "close")
      expect(first, `client ${id}`).toBeGreaterThanOrEqual(0)
      expect(mine.slice(first + 1).filter((e) => e.status !== undefined && e.status < 300), `client ${id}`).toEqual([])
    }
    expect(exitMs).toBeLessThan(GRACE_MS / 2)
    const answeredAfter = after.filter((e) => e.status !== undefined)
    // The log says so: the signal, then how many accepted requests the drain answered.
    const stopping = service.logLines().find((line) => line["msg"] === "stopping")
    const stopped = service.logLines().find((line) => line["msg"] === "stopped")
    expect(stopping, service.output).toMatchObject({ signal: "SIGTERM" })
    const drained = stopped?.["requests.drained"]
    expect(drained).toBeTypeOf("number")
    expect(drained).toBeLessThanOrEqual(answeredAfter.filter((e) => e.status !== 503).length)
    console.info(
      `[shutdown keep-alive ${store}] ${CLIENTS} clients, ${before.length} requests before SIGTERM; ` +
        `first sign of shutdown ${drainSeenAt - signalled} ms after it; then ${answeredAfter.length} answered ` +
        `(${answeredAfter.filter((e) => e.connection === "close").length} with Connection: close; ${String(drained)} drained), ` +
        `${after.length - answeredAfter.length} refused/cut; exit 0 after ${exitMs} ms`
    )
  }, 40_000)
})

describe("SIGTERM and single connections", () => {
  it("closes idle and half-sent connections at once, finishes an upload it accepted, refuses new connections", async () => {
    const service = await startService({ env: { API_KEYS: API_KEY, STORE: "memory" } })
    // Idle after one request on a kept-alive connection.
    const idle = await RawConnection.open(service.port)
    await idle.write(rawRequest("GET", "/healthz"))
    await idle.waitForResponses(1, 5_000)
    // Half-way through its request headers.
    const halfSent = await RawConnection.open(service.port)
    await halfSent.write("GET /v1/pets HTTP/1.1\r\nHost: localhost\r\nAuthor")
    // An accepted create whose body is still on its way.
    const body = JSON.stringify({ name: "Slow upload", categoryId: 4 })
    const upload = await RawConnection.open(service.port)
    await upload.write(
      rawRequest("POST", "/v1/pets", {
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json", "content-length": String(body.length) }
      }) + body.slice(0, 10)
    )
    await sleep(300)

    const signalledAt = Date.now()
    service.signal("SIGTERM")
    const idleClosed = await idle.waitForClose(2_000)
    const halfSentClosed = await halfSent.waitForClose(2_000)
    const closedMs = Date.now() - signalledAt
    expect(idleClosed.responses).toHaveLength(1)
    expect(halfSentClosed.responses).toEqual([])
    await expect(RawConnection.open(service.port)).rejects.toMatchObject({ code: "ECONNREFUSED" })

    // The upload goes on after the signal and is answered in full.
    await sleep(500)
    expect(service.exitStatus).toBeUndefined()
    await upload.write(body.slice(10))
    const { responses } = await upload.waitForClose(5_000)
    expect(responses.map((response) => response.status)).toEqual([201])
    expect(isPet(responses[0]?.json)).toBe(true)
    expect(responses[0]?.headers["connection"]).toBe("close")

    const exit = await service.waitForExit(5_000)
    const exitMs = Date.now() - signalledAt
    expect(exit, service.output).toEqual({ code: 0, signal: null })
    expect(exitMs).toBeLessThan(GRACE_MS / 2)
    console.info(`[shutdown connections] idle and half-sent closed within ${closedMs} ms; exit ${exitMs} ms after SIGTERM`)
  }, 30_000)
})
