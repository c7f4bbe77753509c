/**
 * The connection policy of the service's node:http server, in process with plain
 * request listeners standing in for the application: the bounds the real-process
 * tests (test/e2e) cannot reach cheaply — the grace period of a shutdown, the number
 * of one connection's requests in the application at once — and the answers given
 * while no application is attached.
 */
import { afterEach, describe, expect, it } from "vitest"
import type * as Http from "node:http"
import type { AddressInfo } from "node:net"
import {
  MAX_IN_PROGRESS_PER_CONNECTION,
  MAX_WAITING_PER_CONNECTION,
  ServiceServer
} from "../../../../src/adapters/http/server/process/NodeServer.ts"
import { isErrorBody, RawConnection, rawRequest } from "../../../e2e/RawHttp.ts"

const servers: Array<ServiceServer> = []

afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    if (server.listening) server.close()
  }
})

const listening = async (shutdownTimeoutMs = 10_000) => {
  const server = new ServiceServer(shutdownTimeoutMs)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, port: (server.address() as AddressInfo).port }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

describe("ServiceServer", () => {
  it("until the application attaches: /healthz 200, anything else 503 with Retry-After; then the application answers", async () => {
    const { server, port } = await listening()
    const connection = await RawConnection.open(port)
    await connection.write(rawRequest("GET", "/healthz") + rawRequest("POST", "/v1/pets", { body: "{}" }))
    const [health, starting] = await connection.waitForResponses(2, 2_000)
    expect(health?.status).toBe(200)
    expect(health?.json).toEqual({ status: "ok" })
    expect(starting?.status).toBe(503)
    expect(isErrorBody(starting!, "service_unavailable")).toBe(true)
    expect(starting?.headers["retry-after"]).toBe("1")

    server.on("request", (_request: Http.IncomingMessage, response: Http.ServerResponse) => response.end("app"))
    await connection.write(rawRequest("GET", "/anything"))
    const responses = await connection.waitForResponses(3, 2_000)
    expect(responses[2]?.body).toBe("app")
    connection.destroy()
  })

  it("gives its own answers a request id: the client's when sane, a fresh one otherwise", async () => {
    await listening().then(async ({ port }) => {
      const connection = await RawConnection.open(port)
      await connection.write(
        rawRequest("GET", "/healthz", { headers: { "x-request-id": "probe-1" } }) +
          rawRequest("GET", "/v1/pets", { headers: { "x-request-id": "probe-2" } }) +
          rawRequest("GET", "/v1/pets", { headers: { "x-request-id": "not sane" } }) +
          "NOT A REQUEST\r\n\r\n"
      )
      const [health, starting, replaced, malformed] = await connection.waitForResponses(4, 2_000)
      expect(health?.headers["x-request-id"]).toBe("probe-1")
      expect(starting?.headers["x-request-id"]).toBe("probe-2")
      expect(replaced?.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
      expect(malformed?.status).toBe(400)
      expect(malformed?.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
      connection.destroy()
    })
  })

  it(`keeps at most ${MAX_IN_PROGRESS_PER_CONNECTION} of one connection's pipelined requests in the application, and answers all in order`, async () => {
    const { server, port } = await listening()
    let inProgress = 0
    let most = 0
    server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
      most = Math.max(most, ++inProgress)
      setTimeout(() => {
        inProgress--
        response.end(request.url)
      }, 5)
    })
    const connection = await RawConnection.open(port)
    const count = MAX_WAITING_PER_CONNECTION
    await connection.write(Array.from({ length: count }, (_, i) => rawRequest("GET", `/${i}`)).join(""))
    const responses = await connection.waitForResponses(count, 10_000)
    expect(responses.map((response) => response.body)).toEqual(Array.from({ length: count }, (_, i) => `/${i}`))
    expect(most).toBe(MAX_IN_PROGRESS_PER_CONNECTION)
    connection.destroy()
  })

  it("cuts off a connection that pipelines past the bound: what was in progress is answered, the rest never reaches the application", async () => {
    const { server, port } = await listening()
    let seen = 0
    server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
      seen++
      setTimeout(() => response.end(request.url), 20)
    })
    const connection = await RawConnection.open(port)
    connection.socket.on("error", () => {})
    const count = MAX_IN_PROGRESS_PER_CONNECTION + MAX_WAITING_PER_CONNECTION + 50
    await connection.write(Array.from({ length: count }, (_, i) => rawRequest("GET", `/${i}`)).join(""))
    const { responses } = await connection.waitForClose(5_000)
    expect(responses.map((response) => response.body)).toEqual(
      Array.from({ length: MAX_IN_PROGRESS_PER_CONNECTION }, (_, i) => `/${i}`)
    )
    expect(seen).toBe(MAX_IN_PROGRESS_PER_CONNECTION)
    expect(connection.leftover).toBe("")
  })

  it("a shutdown waits for an accepted request only up to the grace period, then closes its connection", async () => {
    const graceMs = 300
    const { server, port } = await listening(graceMs)
    let accepted!: () => void
    const acceptedSignal = new Promise<void>((resolve) => accepted = resolve)
    server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
      accepted()
      request.resume()
      request.on("end", () => response.end("done"))
    })
    const upload = await RawConnection.open(port)
    await upload.write(rawRequest("POST", "/upload", { headers: { "content-length": "100" } }) + "only part of it")
    await acceptedSignal

    const started = performance.now()
    const closed = new Promise<number>((resolve) => server.close(() => resolve(performance.now() - started)))
    await sleep(graceMs / 2)
    expect(upload.isClosed).toBe(false)
    const closedAfterMs = await closed
    expect(closedAfterMs).toBeGreaterThanOrEqual(graceMs - 20)
    expect(closedAfterMs).toBeLessThan(graceMs + 1_000)
    expect((await upload.waitForClose(1_000)).responses).toEqual([])
  })

  it("a pipelined request whose turn comes after the application detached gets 503, not silence", async () => {
    const { server, port } = await listening()
    let release!: () => void
    const held = new Promise<void>((resolve) => release = resolve)
    server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
      void held.then(() => response.end(request.url))
    })
    // One more than the application may hold at once: the last one waits its turn.
    const count = MAX_IN_PROGRESS_PER_CONNECTION + 1
    const connection = await RawConnection.open(port)
    await connection.write(Array.from({ length: count }, (_, i) => rawRequest("GET", `/${i}`)).join(""))
    await sleep(50)
    server.removeAllListeners("request")
    release()
    const responses = await connection.waitForResponses(count, 2_000)
    expect(responses.slice(0, -1).map((response) => response.body)).toEqual(
      Array.from({ length: count - 1 }, (_, i) => `/${i}`)
    )
    const last = responses[count - 1]!
    expect(last.status).toBe(503)
    expect(isErrorBody(last, "service_unavailable")).toBe(true)
    expect(last.headers["connection"]).toBe("close")
  })
})
