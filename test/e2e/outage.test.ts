/**
 * The PostgreSQL store when the database goes away under a running service: a
 * TCP proxy in this test sits between the service and the real server (which
 * stays up for the other tests) and is cut, then restored.
 *
 * While it is away every request ends within the configured timeout (plus
 * slack) with 503 `service_unavailable` — never a hang, never a 500 — and
 * /readyz says 503; once it is back the same process recovers on its own.
 */
import { isRequestLine, WARN } from "./LogLines.ts"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { createDatabase, databaseUrl, dropAllDatabases, postgresAvailable, serverUrl } from "./PgAdmin.ts"
import {
  createPet,
  eventually,
  type HttpResult,
  killAll,
  listAll,
  newPet,
  type PetJson,
  removeTempDirs,
  type ServiceProcess,
  startService
} from "./ServiceProcess.ts"
import { TcpProxy } from "./TcpProxy.ts"

const API_KEY = "outage-test-key"
// In the URL the service gets; the server (trust auth) never asks for it, so it must never be printed.
const DB_PASSWORD = `pw-${Math.random().toString(36).slice(2)}-Qk3`
const CONNECT_TIMEOUT_MS = 1_000
const STATEMENT_TIMEOUT_MS = 2_000
// Scheduling slack on a busy two-core machine.
const SLACK_MS = 3_000
/**
 * The bound on a request while the database is away, by outage kind: the configured
 * statement timeout plus scheduling slack, whether the connection is refused or the
 * network goes silent with a statement already on the wire.
 */
const BOUND_MS = {
  refuse: STATEMENT_TIMEOUT_MS + SLACK_MS,
  blackhole: STATEMENT_TIMEOUT_MS + SLACK_MS
} as const
type Mode = keyof typeof BOUND_MS

const proxies: Array<TcpProxy> = []

afterEach(async () => {
  await killAll()
  for (const proxy of proxies.splice(0)) await proxy.close()
})
afterAll(async () => {
  removeTempDirs()
  if (postgresAvailable) await dropAllDatabases()
})

const startBehindProxy = async (): Promise<{ service: ServiceProcess; proxy: TcpProxy }> => {
  const server = new URL(serverUrl)
  const proxy = await TcpProxy.start({ host: server.hostname, port: Number(server.port || 5432) })
  proxies.push(proxy)
  const database = await createDatabase()
  const service = await startService({
    env: {
      API_KEYS: API_KEY,
      STORE: "postgres",
      DATABASE_URL: databaseUrl(database, { host: "127.0.0.1", port: proxy.port, password: DB_PASSWORD }),
      DATABASE_POOL_SIZE: "4",
      DATABASE_CONNECT_TIMEOUT: `${CONNECT_TIMEOUT_MS / 1000} seconds`,
      DATABASE_STATEMENT_TIMEOUT: `${STATEMENT_TIMEOUT_MS / 1000} seconds`
    }
  })
  return { service, proxy }
}

/** One of each store-backed request, all at once; every one must be a quick, well-formed 503. */
const outageRound = async (service: ServiceProcess, knownId: number, boundMs: number) => {
  const requests: ReadonlyArray<readonly [string, string, unknown]> = [
    ["GET", "/readyz", undefined],
    ["POST", "/v1/pets", { name: "Blocked", categoryId: 1 }],
    ["GET", "/v1/pets", undefined],
    ["GET", "/v1/pets?status=sold&limit=3", undefined],
    ["GET", `/v1/pets/${knownId}`, undefined],
    ["POST", "/v1/pets", { name: "Blocked too", categoryId: 2, status: "pending" }]
  ]
  const results = await Promise.all(requests.map(([method, path, body]) =>
    service.request(method, path, {
      apiKey: API_KEY,
      ...(body === undefined ? {} : { body }),
      // Far above the bound below, so a hang is reported as such rather than as an abort.
      timeoutMs: 30_000
    }).then((result) => ({ request: `${method} ${path}`, result }))
  ))
  for (const { request, result } of results) expectUnavailable(request, result, boundMs)
  return Math.max(...results.map(({ result }) => result.elapsedMs))
}

const expectUnavailable = (request: string, result: HttpResult, boundMs: number) => {
  expect(result.status, `${request}: ${result.text}`).toBe(503)
  expect(result.headers.get("content-type")).toContain("application/json")
  expect(result.json, request).toMatchObject({ code: "service_unavailable", status: 503, message: expect.any(String) })
  expect(result.elapsedMs, request).toBeLessThan(boundMs)
}

const expectCleanOutput = (service: ServiceProcess) => {
  const everything = service.stdout + service.stderr
  expect(everything, service.output).not.toMatch(/^\s+at /m)
  expect(everything).not.toContain(DB_PASSWORD)
  expect(everything).not.toContain(API_KEY)
  expect(everything).not.toContain('"statusCode":500')
}

describe.skipIf(!postgresAvailable)("the database goes away and comes back", () => {
  it.each(["refuse", "blackhole"] satisfies ReadonlyArray<Mode>)(
    "%s: quick 503 service_unavailable on every request, readyz 503, then recovery without a restart",
    async (mode) => {
      const { proxy, service } = await startBehindProxy()
      const before: Array<PetJson> = []
      for (let i = 0; i < 5; i++) before.push(await createPet(service, API_KEY, newPet(i)))
      const knownId = before[0]?.id ?? 1

      await proxy.cut(mode)
      const firstRoundMs = await outageRound(service, knownId, BOUND_MS[mode])
      // Again, now that the pool has seen its connections fail: from here on every kind of
      // outage is held to the configured timeout.
      const secondRoundMs = await outageRound(service, knownId, BOUND_MS.refuse)
      // Liveness does not depend on the database.
      const health = await service.request("GET", "/healthz")
      expect(health.status).toBe(200)
      // A burst does not pile up behind the dead database either.
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        service.request("POST", "/v1/pets", { apiKey: API_KEY, body: newPet(i, "outage"), timeoutMs: 30_000 })
      ))
      for (const result of burst) expectUnavailable("POST /v1/pets (burst)", result, BOUND_MS.refuse)
      const burstMs = Math.max(...burst.map((result) => result.elapsedMs))

      await proxy.restore()
      const recoveryMs = await eventually(
        async () => (await service.request("GET", "/readyz", { timeoutMs: 30_000 })).status === 200,
        30_000,
        "readyz 200 after the database came back"
      )
      const after = await createPet(service, API_KEY, newPet(99, "after"))
      expect(after.id).toBeGreaterThan(Math.max(...before.map((pet) => pet.id)))
      expect((await service.request("GET", `/v1/pets/${knownId}`, { apiKey: API_KEY })).json).toEqual(before[0])
      // Nothing refused during the outage was stored behind the client's back.
      const { pets } = await listAll(service, API_KEY)
      expect(pets).toEqual([...before, after])

      expect(service.exitStatus).toBeUndefined()
      expect(await service.stop()).toEqual({ code: 0, signal: null })
      expectCleanOutput(service)
      // Each 503 is logged at warn with its cause, not as an ordinary info line.
      const unavailable = service.logLines().filter(isRequestLine).filter((line) => line.res.statusCode === 503)
      expect(unavailable.length).toBeGreaterThan(0)
      for (const line of unavailable) {
        expect(line.level).toBe(WARN)
        expect(line.err.message).toMatch(/database/)
      }
      console.info(
        `[outage ${mode}] slowest 503: first round ${firstRoundMs.toFixed(0)} ms, second ${
          secondRoundMs.toFixed(0)
        } ms, burst of 20 ${burstMs.toFixed(0)} ms; readyz 200 again ${recoveryMs.toFixed(0)} ms after restore ` +
          `(proxy accepted ${proxy.accepted} connections)`
      )
    },
    90_000
  )

  it.each(["refuse", "blackhole"] satisfies ReadonlyArray<Mode>)(
    "%s at startup: exit 1 within the connect timeout, one plain line, no stack, no password",
    async (mode) => {
      const server = new URL(serverUrl)
      const proxy = await TcpProxy.start({ host: server.hostname, port: Number(server.port || 5432) })
      proxies.push(proxy)
      await proxy.cut(mode)
      const service = await startService({
        env: {
          API_KEYS: API_KEY,
          STORE: "postgres",
          DATABASE_URL: databaseUrl("postgres", { host: "127.0.0.1", port: proxy.port, password: DB_PASSWORD }),
          DATABASE_CONNECT_TIMEOUT: `${CONNECT_TIMEOUT_MS / 1000} seconds`,
          DATABASE_STATEMENT_TIMEOUT: `${STATEMENT_TIMEOUT_MS / 1000} seconds`
        },
        waitUntilListening: false
      })
      const exit = await service.waitForExit(CONNECT_TIMEOUT_MS + 10_000)
      const elapsedMs = Date.now() - service.startedAt
      expect(exit, service.output).toEqual({ code: 1, signal: null })
      const lines = service.stderr.split("\n").filter((line) => line.trim() !== "")
      expect(lines, service.output).toHaveLength(1)
      expect(lines[0]).toMatch(/^Animal Store stopped: .*connect/i)
      expect(service.stdout).not.toContain("Listening on")
      expectCleanOutput(service)
      console.info(`[outage ${mode} at startup] exit 1 after ${elapsedMs} ms: ${lines[0]}`)
    },
    30_000
  )
})
