/**
 * The PostgreSQL store when its database is replaced under a running service: dropped
 * (WITH (FORCE), which cuts the service's connections) and created again, empty, under
 * the same name, as a re-created database or a `pg_restore --clean` leaves it.
 *
 * Until the service notices, every request is a 503 `service_unavailable` naming the
 * schema (never a 500) and /readyz is 503 with that cause. It then exits non-zero with
 * one plain line, so that its supervisor restarts it: the restart migrates the new
 * database and serves again.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { ERROR, isRequestLine } from "./LogLines.ts"
import { createDatabase, databaseUrl, dropAllDatabases, postgresAvailable, query, recreateDatabase } from "./PgAdmin.ts"
import {
  createPet,
  type HttpResult,
  killAll,
  newPet,
  type PetJson,
  type ServiceProcess,
  startService
} from "./ServiceProcess.ts"

const API_KEY = "replaced-test-key"
const SCHEMA_CAUSE = /the database schema is missing or out of date/
// The service checks the schema every 2 s and acts on the second sighting in a row,
// then drains; the rest is slack for a busy machine.
const EXIT_BOUND_MS = 15_000

afterEach(async () => {
  await killAll()
})
afterAll(async () => {
  if (postgresAvailable) await dropAllDatabases()
})

const start = (database: string) =>
  startService({
    env: {
      API_KEYS: API_KEY,
      STORE: "postgres",
      DATABASE_URL: databaseUrl(database),
      DATABASE_POOL_SIZE: "4",
      DATABASE_STATEMENT_TIMEOUT: "2 seconds"
    }
  })

/** One of each store-backed request, all at once. */
const round = (service: ServiceProcess, knownId: number) => {
  const requests: ReadonlyArray<readonly [string, string, unknown]> = [
    ["GET", "/readyz", undefined],
    ["GET", "/v1/pets", undefined],
    ["GET", `/v1/pets/${knownId}`, undefined],
    ["POST", "/v1/pets", { name: "Lost", categoryId: 1 }],
    ["GET", "/v1/store/inventory", undefined],
    ["POST", "/v1/store/orders", { petId: knownId }],
    ["GET", "/v1/store/orders/1", undefined]
  ]
  return Promise.all(requests.map(async ([method, path, body]) => ({
    request: `${method} ${path}`,
    result: await service.request(method, path, { apiKey: API_KEY, ...(body === undefined ? {} : { body }) })
  })))
}

const expectUnavailable = (request: string, result: HttpResult) => {
  expect(result.status, `${request}: ${result.text}`).toBe(503)
  expect(result.headers.get("content-type")).toContain("application/json")
  expect(result.json, request).toMatchObject({ code: "service_unavailable", status: 503, message: expect.any(String) })
}

describe.skipIf(!postgresAvailable)("the database is replaced under a running service", () => {
  it("503 naming the schema (never 500), readyz 503, then exit 1 so that a restart migrates and serves", async () => {
    const database = await createDatabase()
    const service = await start(database)
    const before: Array<PetJson> = []
    for (let i = 0; i < 3; i++) before.push(await createPet(service, API_KEY, newPet(i)))
    const knownId = before[0]?.id ?? 1
    const created = () => service.logLines().filter((line) => isRequestLine(line) && line.res.statusCode === 201)
    await service.waitFor(() => created().length === before.length, 5_000, "the creates' log lines")
    const loggedBefore = service.logLines().length

    await recreateDatabase(database)
    const replacedAt = performance.now()
    // Right away, before the service has made sure: every request is a 503 (one meeting a
    // connection the drop cut may name that instead of the schema).
    const answers = await round(service, knownId)
    for (const { request, result } of answers) expectUnavailable(request, result)
    const readiness = answers[0]?.result
    expect(String((readiness?.json as { message?: string } | undefined)?.message)).toMatch(/^not ready: store: /)

    const exit = await service.waitForExit(EXIT_BOUND_MS)
    const exitMs = performance.now() - replacedAt
    expect(exit, service.output).toEqual({ code: 1, signal: null })
    const lines = service.stderr.split("\n").filter((line) => line.trim() !== "")
    expect(lines, service.output).toHaveLength(1)
    expect(lines[0]).toMatch(/^Animal Store stopped: the database schema is missing or out of date: .*restart/)
    const logged = service.logLines().find((line) => line["level"] === ERROR)
    expect(String(logged?.["msg"]), service.output).toMatch(SCHEMA_CAUSE)
    // What the service answered meanwhile, by its request log: only 503s, readiness naming
    // the missing migrations, the other requests the schema (or the cut connections).
    const answered = service.logLines().slice(loggedBefore).filter(isRequestLine)
    expect(answered.length).toBeGreaterThanOrEqual(answers.length)
    for (const line of answered) {
      expect(line.res.statusCode, JSON.stringify(line)).toBe(503)
      expect(line.err.message).toMatch(
        line.req.url === "/readyz"
          ? /^not ready: store: (the database schema is missing or out of date: it records no migration, this release needs \d{4}$|the database is unavailable)/
          : /^(the database schema is missing or out of date \(SQLSTATE 42P01\)|the database is unavailable)/
      )
    }
    expect(answered.some((line) => SCHEMA_CAUSE.test(line.err.message))).toBe(true)
    expect(service.stdout + service.stderr).not.toContain('"statusCode":500')
    expect(service.stdout + service.stderr).not.toMatch(/^\s+at /m)

    // The supervisor's restart: it migrates the new, empty database and serves it.
    const restarted = await start(database)
    expect((await restarted.request("GET", "/readyz")).status).toBe(200)
    expect((await restarted.request("GET", "/v1/pets", { apiKey: API_KEY })).json).toEqual([])
    expect((await createPet(restarted, API_KEY, newPet(9, "after"))).id).toBe(1)
    const migrations = await query<{ n: number }>(database, "SELECT count(*)::int AS n FROM animal_store_migrations")
    expect(migrations[0]?.n).toBeGreaterThanOrEqual(5)
    expect(await restarted.stop()).toEqual({ code: 0, signal: null })
    console.info(`[database replaced] exit 1 ${exitMs.toFixed(0)} ms after the database was re-created`)
  }, 60_000)
})
