/**
 * Configuration errors stop the real process at once with exit code 1 and one
 * plain line naming the variable; a run without API_KEYS makes up a key.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest"
import * as Fs from "node:fs"
import { createServer } from "node:net"
import * as Path from "node:path"
import { entry as mainScript } from "../../scripts/bundle.ts"
import { eventually, freePort, killAll, removeTempDirs, startService, tempDir } from "./ServiceProcess.ts"
import { startScript } from "./StartScript.ts"

afterEach(killAll)
afterAll(async () => {
  await killAll()
  removeTempDirs()
})

/** A stack trace line as Node prints one. */
const STACK_LINE = /^\s+at .+/m

const badValues: ReadonlyArray<{ readonly env: Record<string, string>; readonly names: RegExp }> = [
  { env: { PORT: "abc" }, names: /PORT/ },
  { env: { PORT: "70000" }, names: /PORT/ },
  { env: { STORE: "foo" }, names: /STORE/ },
  { env: { LOG_LEVEL: "loud" }, names: /LOG_LEVEL/ },
  { env: { PUBLIC_BASE_URL: "ftp://x" }, names: /PUBLIC_BASE_URL/ },
  { env: { STAGING_BASE_URL: "http://example.com/v2" }, names: /STAGING_BASE_URL/ },
  { env: { DATABASE_POOL_SIZE: "many" }, names: /DATABASE_POOL_SIZE/ },
  { env: { DATABASE_POOL_SIZE: "0" }, names: /DATABASE_POOL_SIZE/ },
  { env: { DATABASE_CONNECT_TIMEOUT: "soon" }, names: /DATABASE_CONNECT_TIMEOUT/ },
  { env: { DATABASE_STATEMENT_TIMEOUT: "-" }, names: /DATABASE_STATEMENT_TIMEOUT/ },
  { env: { STORE: "postgres" }, names: /DATABASE_URL/ },
  { env: { PHOTO_STORE: "disk" }, names: /PHOTO_STORE/ },
  { env: { PHOTO_STORE: "s3" }, names: /PHOTO_STORE=s3 needs S3_BUCKET/ },
  { env: { PHOTO_STORE: "s3", S3_BUCKET: "photos", S3_ENDPOINT: "minio:9000" }, names: /S3_ENDPOINT/ },
  { env: { S3_TIMEOUT: "soon" }, names: /S3_TIMEOUT/ },
  { env: { ADMIN_PORT: "65536" }, names: /ADMIN_PORT/ },
  { env: { CORS_ORIGINS: "app.example.com" }, names: /CORS_ORIGINS/ },
  { env: { CORS_ORIGINS: "https://app.example.com/path" }, names: /CORS_ORIGINS/ },
  { env: { RATE_LIMIT: "fast" }, names: /RATE_LIMIT/ },
  { env: { RATE_LIMIT: "0/s" }, names: /RATE_LIMIT/ },
  { env: { RATE_LIMIT_ADDRESS: "off" }, names: /RATE_LIMIT_ADDRESS/ },
  { env: { TRUST_PROXY: "everyone" }, names: /TRUST_PROXY/ },
  { env: { MIGRATE: "later" }, names: /MIGRATE/ },
  { env: { WEBHOOK_ALLOW_PRIVATE: "yes" }, names: /WEBHOOK_ALLOW_PRIVATE/ },
  { env: { EVENTS_MAX_STREAMS: "0" }, names: /EVENTS_MAX_STREAMS: must be a whole number of at least 1/ },
  // A Redis that does not answer at start is a configuration error, not an outage to ride out.
  { env: { RATE_LIMIT: "200/2s", REDIS_URL: "redis://127.0.0.1:1" }, names: /REDIS_URL: Redis does not answer: connect ECONNREFUSED 127\.0\.0\.1:1/ }
]

describe("a bad configuration value", () => {
  it.each(badValues)("$env: exit 1 at once, one line on stderr naming the variable, no stack", async ({ env, names }) => {
    const dataDir = tempDir()
    const service = await startService({
      // Every other setting valid, so the bad one is the only reason to stop.
      env: { API_KEYS: "k", STORE: "memory", DATA_DIR: dataDir, ...env },
      waitUntilListening: false
    })
    const exit = await service.waitForExit(10_000)
    const elapsed = Date.now() - service.startedAt
    expect(exit, service.output).toEqual({ code: 1, signal: null })
    // Node's own start is most of it (about 1 s here); room for a loaded machine.
    expect(elapsed).toBeLessThan(8_000)
    const lines = service.stderr.split("\n").filter((line) => line.trim() !== "")
    expect(lines, service.output).toHaveLength(1)
    expect(lines[0]).toMatch(names)
    expect(service.stderr).not.toMatch(STACK_LINE)
    expect(service.stdout).not.toMatch(STACK_LINE)
    expect(service.stdout).not.toContain("Listening on")
  }, 20_000)

  it("a port already taken: exit 1 with one line that says so, no stack", async () => {
    const port = await freePort()
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve))
    try {
      const service = await startService({
        env: { API_KEYS: "k", STORE: "memory" },
        port,
        waitUntilListening: false
      })
      const exit = await service.waitForExit(10_000)
      expect(exit, service.output).toEqual({ code: 1, signal: null })
      const lines = service.stderr.split("\n").filter((line) => line.trim() !== "")
      expect(lines, service.output).toHaveLength(1)
      expect(lines[0]).toMatch(/^Animal Store stopped: .*EADDRINUSE.*:\d+/)
      expect(service.stderr).not.toMatch(STACK_LINE)
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()))
    }
  }, 20_000)
})

describe("without API_KEYS", () => {
  it("prints one generated key, once, and exactly that key works", async () => {
    const service = await startService({ env: { STORE: "memory" } })
    // On stderr: the JSON log on stdout never carries a key.
    const match = /No API_KEYS set\. This run accepts one generated key: (\S+)/.exec(service.stderr)
    expect(match, service.output).not.toBeNull()
    const key = match?.[1] ?? ""
    expect(key.length).toBeGreaterThanOrEqual(16)

    const missing = await service.request("GET", "/v1/pets")
    expect(missing.status).toBe(401)
    expect(missing.json).toMatchObject({ code: expect.any(String), status: 401 })
    const wrong = await service.request("GET", "/v1/pets", { apiKey: `${key}x` })
    expect(wrong.status).toBe(401)
    const created = await service.request("POST", "/v1/pets", { apiKey: key, body: { name: "Rex", categoryId: 1 } })
    expect(created.status).toBe(201)
    const listed = await service.request("GET", "/v1/pets", { apiKey: key })
    expect(listed.status).toBe(200)
    expect(listed.json).toEqual([created.json])

    const exit = await service.stop()
    expect(exit.code).toBe(0)
    // Said once at startup, on stderr, never repeated (requests are logged without it).
    expect(service.stderr.split(key).length - 1, service.output).toBe(1)
    expect(service.stdout).not.toContain(key)
  }, 30_000)

  it("a new run makes up a new key", async () => {
    const first = await startService({ env: { STORE: "memory" } })
    const second = await startService({ env: { STORE: "memory" } })
    const keyOf = (stderr: string) => /generated key: (\S+)/.exec(stderr)?.[1]
    const firstKey = keyOf(first.stderr)
    const secondKey = keyOf(second.stderr)
    expect(firstKey).toBeDefined()
    expect(secondKey).toBeDefined()
    expect(firstKey).not.toBe(secondKey)
    expect((await second.request("GET", "/v1/pets", { apiKey: firstKey ?? "" })).status).toBe(401)
  }, 30_000)
})

describe(".env in the working directory", () => {
  it("npm start's command reads it when present; the environment still wins", async () => {
    const cwd = tempDir()
    Fs.writeFileSync(Path.join(cwd, ".env"), "# local settings\nAPI_KEYS=from-dotenv\nLOG_LEVEL=warn\n")
    const nodeArgs = [...startScript().flags, mainScript, ...startScript().args]
    const service = await startService({ cwd, nodeArgs, env: { STORE: "memory", LOG_LEVEL: "info" } })
    const pet = { name: "Dot", categoryId: 1, status: "available" }
    expect((await service.request("POST", "/v1/pets", { apiKey: "from-dotenv", body: pet })).status).toBe(201)
    expect((await service.request("POST", "/v1/pets", { apiKey: "another", body: pet })).status).toBe(401)
    // LOG_LEVEL=info from the environment, not .env's warn: the per-request line is there
    // (written as the response goes, so it may reach the pipe just after it).
    await eventually(() => Promise.resolve(service.stdout.includes("\"msg\":\"request completed\"")), 10_000, "the request's log line")

    // Without a .env, the same command starts as before.
    const plain = await startService({ cwd: tempDir(), nodeArgs, env: { STORE: "memory" } })
    expect(plain.stderr).toMatch(/No API_KEYS set\. This run accepts one generated key/)
  }, 60_000)
})
