/**
 * Requests that reach the real process while it starts: from the first
 * millisecond after spawn, clients connect in a tight loop until the service is
 * ready. Nothing may hang: every attempt is refused at the socket (not listening
 * yet) or gets a complete answer at once — `/healthz` 200, and `/readyz` and
 * the API 503 `service_unavailable` with `Retry-After` until the store is ready.
 * A create answered 503 is not stored; one answered 201 is. Every answer,
 * those the HTTP server gives before the application is attached included,
 * has its line in the request log.
 *
 * On the embedded store with an empty DATA_DIR (initdb, the longest start), with
 * an existing one, and on PostgreSQL.
 */
import { existsSync } from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import * as EmbeddedDatabase from "../../src/adapters/embedded/EmbeddedDatabase.ts"
import { createDatabase, databaseUrl, postgresAvailable } from "./PgAdmin.ts"
import { isErrorBody, RawConnection, rawRequest, type RawResponse } from "./RawHttp.ts"
import { initializedDataDir, listAll, type ServiceProcess, startService, tempDir } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"
import { isRequestLine, type RequestLine, WARN } from "./LogLines.ts"

const API_KEY = "startup-test-key"
/**
 * Longest an answer may take; a request that is never answered (the failure this
 * guards against) waits for ever. The embedded database starts on a thread of its own,
 * but the first start of an empty DATA_DIR (filled from the template, or initdb when
 * there is none) keeps both cores busy, and answers can wait behind it.
 */
const ANSWER_BOUND_MS = { initdb: 15_000, other: 5_000 } as const
const WORKERS = 4

cleanUpProcesses()

type Kind = "healthz" | "readyz" | "create" | "list"
const KINDS: ReadonlyArray<Kind> = ["healthz", "readyz", "create", "list"]

type Attempt =
  | { readonly outcome: "refused"; readonly kind: Kind; readonly atMs: number }
  | {
    readonly outcome: "answered"
    readonly kind: Kind
    readonly atMs: number
    readonly tookMs: number
    readonly response: RawResponse
    readonly name: string | undefined
  }
  | { readonly outcome: "hang" | "error"; readonly kind: Kind; readonly atMs: number; readonly detail: string }

const requestFor = (kind: Kind, name: string): string => {
  switch (kind) {
    case "healthz":
      return rawRequest("GET", "/healthz")
    case "readyz":
      return rawRequest("GET", "/readyz")
    case "list":
      return rawRequest("GET", "/v1/pets?limit=1", { headers: { authorization: `Bearer ${API_KEY}` } })
    case "create":
      return rawRequest("POST", "/v1/pets", {
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ name, categoryId: 1 })
      })
  }
}

/** One attempt on a fresh connection. */
const attempt = async (service: ServiceProcess, kind: Kind, name: string, boundMs: number): Promise<Attempt> => {
  const atMs = Date.now() - service.startedAt
  let connection: RawConnection
  try {
    connection = await RawConnection.open(service.port)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === "ECONNREFUSED"
      ? { outcome: "refused", kind, atMs }
      : { outcome: "error", kind, atMs, detail: `connect: ${code ?? String(error)}` }
  }
  const started = performance.now()
  try {
    await connection.write(requestFor(kind, name))
    const [response] = await connection.waitForResponses(1, boundMs)
    return {
      outcome: "answered",
      kind,
      atMs,
      tookMs: performance.now() - started,
      response: response as RawResponse,
      name: kind === "create" ? name : undefined
    }
  } catch (error) {
    const detail = String((error as Error).message)
    return { outcome: detail.startsWith("timed out") ? "hang" : "error", kind, atMs, detail }
  } finally {
    connection.destroy()
  }
}

/**
 * Spawns the service and hammers it from the first millisecond until `/readyz`
 * has said 200 and a few more rounds have passed.
 */
const hammerStart = async (env: Record<string, string>, startTimeoutMs: number, boundMs: number) => {
  const service = await startService({ env, waitUntilListening: false })
  const attempts: Array<Attempt> = []
  let readyAtMs: number | undefined
  let roundsAfterReady = 0
  let sequence = 0
  const deadline = Date.now() + startTimeoutMs
  const worker = async (offset: number) => {
    for (let i = offset; roundsAfterReady < 20 && Date.now() < deadline; i++) {
      if (service.exitStatus !== undefined) return
      const kind = KINDS[i % KINDS.length] as Kind
      const result = await attempt(service, kind, `startup-${sequence++}`, boundMs)
      attempts.push(result)
      if (result.outcome === "answered" && result.kind === "readyz" && result.response.status === 200) {
        readyAtMs ??= result.atMs
      }
      if (readyAtMs !== undefined) roundsAfterReady++
    }
  }
  await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i)))
  return { service, attempts, readyAtMs }
}

const check = async (label: string, env: Record<string, string>, startTimeoutMs: number, boundMs: number) => {
  const { service, attempts, readyAtMs } = await hammerStart(env, startTimeoutMs, boundMs)
  expect(service.exitStatus, service.output).toBeUndefined()
  expect(readyAtMs, `never ready\n${service.output}`).toBeDefined()

  // Nothing hangs and nothing breaks: refused, or answered in full within the bound.
  const failures = attempts.filter((a) => a.outcome === "hang" || a.outcome === "error")
  expect(failures, service.output).toEqual([])
  const answered = attempts.flatMap((a) => a.outcome === "answered" ? [a] : [])

  for (const a of answered) {
    const { status } = a.response
    if (a.kind === "healthz") {
      expect(status, `${a.kind} at ${a.atMs} ms: ${a.response.body}`).toBe(200)
      continue
    }
    const expected = { readyz: 200, list: 200, create: 201 }[a.kind]
    expect([expected, 503], `${a.kind} at ${a.atMs} ms: ${status} ${a.response.body}`).toContain(status)
    if (status === 503) {
      expect(isErrorBody(a.response, "service_unavailable"), a.response.body).toBe(true)
      expect(Number(a.response.headers["retry-after"])).toBeGreaterThan(0)
    }
  }

  // A create the client was told failed is not stored; one it was told succeeded is.
  const created = new Set(answered.filter((a) => a.kind === "create" && a.response.status === 201).map((a) => a.name))
  const refused = new Set(answered.filter((a) => a.kind === "create" && a.response.status === 503).map((a) => a.name))
  const stored = new Set((await listAll(service, API_KEY, { limit: 100 })).pets.map((pet) => pet.name))
  expect([...created].filter((name) => !stored.has(name as string))).toEqual([])
  expect([...refused].filter((name) => stored.has(name as string))).toEqual([])

  const early = answered.filter((a) => a.atMs < (readyAtMs as number))
  const firstAnswerMs = Math.min(...answered.map((a) => a.atMs))
  const slowest = Math.max(...answered.map((a) => a.tookMs))
  console.info(
    `[startup ${label}] ${attempts.length} attempts: ${attempts.filter((a) => a.outcome === "refused").length} refused, ` +
      `${answered.length} answered (${early.length} before ready, ${refused.size} creates refused 503); ` +
      `first answer ${firstAnswerMs} ms after spawn, ready ${readyAtMs} ms; slowest answer ${slowest.toFixed(0)} ms`
  )
  expect(await service.stop()).toEqual({ code: 0, signal: null })

  // Each answer's request line, found by the id the client got, in the one shape of request lines.
  const requestLines = new Map<string | undefined, RequestLine>(
    service.logLines().filter(isRequestLine).map((line) => [line.reqId, line] as const)
  )
  const unlogged = answered.filter((a) => !requestLines.has(a.response.headers["x-request-id"]))
  expect(unlogged.map((a) => `${a.kind} at ${a.atMs} ms: ${a.response.status}`), service.stdout).toEqual([])
  for (const a of early.filter((a) => a.response.status === 503)) {
    const line = requestLines.get(a.response.headers["x-request-id"])!
    expect(line).toMatchObject({
      level: WARN,
      req: {
        method: a.kind === "create" ? "POST" : "GET",
        url: { readyz: "/readyz", list: "/v1/pets", create: "/v1/pets", healthz: "/healthz" }[a.kind]
      },
      res: { statusCode: 503 },
      err: { type: expect.any(String), message: expect.any(String) },
      responseTime: expect.any(Number)
    })
  }
  return { early, readyAtMs: readyAtMs as number }
}

describe("requests while the service starts", () => {
  it("embedded, empty DATA_DIR: answered at once while initdb runs, never a hang", async () => {
    const { early } = await check(
      "embedded, empty DATA_DIR",
      { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: `${tempDir()}/data` },
      60_000,
      ANSWER_BOUND_MS.initdb
    )
    // The port opens before the store is ready: that window was exercised.
    expect(early.length).toBeGreaterThan(0)
  }, 90_000)

  it("embedded, existing DATA_DIR: never a hang", async () => {
    const dataDir = await initializedDataDir()
    await check("embedded, existing DATA_DIR", { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: dataDir }, 30_000, ANSWER_BOUND_MS.other)
  }, 90_000)

  it.skipIf(!postgresAvailable)("PostgreSQL: never a hang", async () => {
    const database = await createDatabase()
    await check("PostgreSQL", { API_KEYS: API_KEY, STORE: "postgres", DATABASE_URL: databaseUrl(database) }, 30_000, ANSWER_BOUND_MS.other)
  }, 60_000)
})

/**
 * The embedded store begins to open (its lock, then PGlite on its thread) before the
 * service has loaded its modules or read its settings (EmbeddedOpening). A stop at any
 * moment of that, or settings that turn out invalid, must still end the process and
 * leave the directory for the next start, with its data.
 */
describe("the embedded store's early opening", () => {
  const env = (dataDir: string) => ({ API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: dataDir })

  it("a SIGTERM at any moment of the start ends the process; the next start opens the directory with its data", async () => {
    const dataDir = await initializedDataDir()
    const first = await startService({ env: env(dataDir) })
    const created = await first.request("POST", "/v1/pets", { apiKey: API_KEY, body: { name: "Early", categoryId: 1 } })
    expect(created.status, created.text).toBe(201)
    expect(await first.stop()).toEqual({ code: 0, signal: null })

    for (const delayMs of [0, 40, 120, 250, 400, 700]) {
      const service = await startService({ env: env(dataDir), waitUntilListening: false })
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      service.signal("SIGTERM")
      const exit = await service.waitForExit(15_000)
      // Killed by the signal while its modules load (no handler yet), or a clean stop after.
      expect(exit.code === 0 || exit.signal === "SIGTERM", `SIGTERM at ${delayMs} ms: ${JSON.stringify(exit)}\n${service.output}`)
        .toBe(true)
    }

    const last = await startService({ env: env(dataDir) })
    const read = await last.request("GET", `/v1/pets/${(created.json as { id: string }).id}`, { apiKey: API_KEY })
    expect(read.status, read.text).toBe(200)
    expect((read.json as { name: string }).name).toBe("Early")
    expect(await last.stop()).toEqual({ code: 0, signal: null })
  }, 90_000)

  it("invalid settings: exit 1 with one line, the directory unlocked for the next start", async () => {
    const dataDir = await initializedDataDir()
    const invalid = await startService({ env: { ...env(dataDir), LOG_LEVEL: "loud" }, waitUntilListening: false })
    expect((await invalid.waitForExit(15_000)).code, invalid.output).toBe(1)
    expect(invalid.stderr.trim().split("\n"), invalid.output).toHaveLength(1)
    expect(invalid.stderr).toContain("LOG_LEVEL")
    expect(existsSync(Path.join(dataDir, EmbeddedDatabase.lockFileName))).toBe(false)

    const next = await startService({ env: env(dataDir) })
    expect((await next.request("GET", "/v1/pets", { apiKey: API_KEY })).status).toBe(200)
    expect(await next.stop()).toEqual({ code: 0, signal: null })
  }, 60_000)
})
