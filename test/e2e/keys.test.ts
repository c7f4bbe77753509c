/**
 * Managed keys with real processes: the bootstrap key of a durable store and its
 * survival across a kill -9, the `animal-store keys` command against a running embedded
 * service (through its admin port) and against a stopped one (the directory itself),
 * and against PostgreSQL with two service instances, where a revocation must reach the
 * other instance within a second.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { createKey, KEY_PATTERN, keysCli } from "./KeysCli.ts"
import { createDatabase, databaseUrl, postgresAvailable, query } from "./PgAdmin.ts"
import { eventually, initializedDataDir, repoRoot, type ServiceProcess, sleep, startService, tempDir } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"
import * as PgNotifications from "../../src/adapters/postgres/PgNotifications.ts"

cleanUpProcesses()

const PET = { name: "Rex", categoryId: 1, status: "available" }
const statusOf = async (service: ServiceProcess, key: string, method: "GET" | "POST") =>
  (await service.request(method, "/v1/pets", method === "POST" ? { apiKey: key, body: PET } : { apiKey: key })).status

describe("embedded store", () => {
  it("bootstrap key once, kept across kill -9; the command manages keys through the running service, and directly when it is stopped", async () => {
    const dataDir = await initializedDataDir()
    const env = { STORE: "embedded", DATA_DIR: dataDir }

    // No key anywhere: the store issues one, writes it to a file in DATA_DIR that only its
    // owner may read, says where on stderr (never the key itself), and keeps only its digest.
    const first = await startService({ env })
    const keyFile = Path.join(dataDir, "bootstrap-key")
    expect(first.stderr.trim().split("\n"), first.output).toEqual([
      `No API key existed, so this store issued one write key, written to ${keyFile} (readable by its owner only; ` +
      "store the key elsewhere and delete the file; manage keys with animal-store keys)"
    ])
    expect(Fs.statSync(keyFile).mode & 0o777).toBe(0o600)
    const bootstrap = Fs.readFileSync(keyFile, "utf8").trim()
    expect(bootstrap).toMatch(new RegExp(`^${KEY_PATTERN.source}$`))
    expect(first.stdout + first.stderr).not.toContain(bootstrap)
    expect(first.stdout.match(KEY_PATTERN)).toBeNull()
    expect(first.stderr.match(KEY_PATTERN)).toBeNull()
    expect(await statusOf(first, bootstrap, "POST")).toBe(201)

    // The admin port answers on loopback only, and only with the token from the data directory.
    const admin = JSON.parse(Fs.readFileSync(Path.join(dataDir, "animal-store.admin.json"), "utf8")) as {
      port: number
      token: string
    }
    expect(Fs.statSync(Path.join(dataDir, "animal-store.admin.json")).mode & 0o777).toBe(0o600)
    expect(admin.port).not.toBe(first.port)
    for (const authorization of [undefined, "Bearer wrong", `Bearer ${admin.token}x`, bootstrap]) {
      const refused = await fetch(`http://127.0.0.1:${admin.port}/admin/keys`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify({ name: "intruder", scope: "write", lifetimeMillis: null })
      })
      expect(refused.status).toBe(401)
      expect(await refused.text()).not.toMatch(KEY_PATTERN)
    }
    // Neither port serves the other's routes.
    expect((await first.request("GET", "/admin/keys", { apiKey: bootstrap })).status).toBe(404)
    const apiOnAdminPort = await fetch(`http://127.0.0.1:${admin.port}/v1/pets`, { headers: { authorization: `Bearer ${bootstrap}` } })
    expect(apiOnAdminPort.status).toBe(404)

    // Through the admin port: a read key works at once, on reads only.
    const reader = await createKey(env, "--name", "reader", "--scope", "read")
    expect(await statusOf(first, reader, "GET")).toBe(200)
    expect(await statusOf(first, reader, "POST")).toBe(403)

    const listed = await keysCli(["list"], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(/^NAME\s+ID\s+PREFIX\s+SCOPE\s+CREATED\s+LAST USED\s+EXPIRES\s+REVOKED$/m)
    expect(listed.stdout).toMatch(/^bootstrap\s+[0-9a-f]{12}\s+as_[0-9a-f]{12}_…\s+write\s/m)
    expect(listed.stdout).toMatch(/^reader\s+[0-9a-f]{12}\s+as_[0-9a-f]{12}_…\s+read\s/m)
    expect(listed.stdout.match(KEY_PATTERN)).toBeNull()

    const revoked = await keysCli(["revoke", "reader"], env)
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(await statusOf(first, reader, "GET")).toBe(401)
    // Through the admin port too, a revoked key is named as such, not as unknown.
    const rotateRevoked = await keysCli(["rotate", "reader"], env)
    expect(rotateRevoked.code).toBe(1)
    expect(rotateRevoked.stderr.trim()).toMatch(
      /^animal-store keys: the API key "reader" was revoked at \d{4}-\d\d-\d\dT[\d:.]+Z; create a new one with `create --name reader`$/
    )

    const rotated = await keysCli(["rotate", "bootstrap", "--grace", "1h"], env)
    expect(rotated.code, rotated.stderr).toBe(0)
    const successor = rotated.stdout.trim()
    expect(successor).toMatch(KEY_PATTERN)
    expect(rotated.stderr).toMatch(/keeps working until/)
    expect(await statusOf(first, successor, "POST")).toBe(201)
    expect(await statusOf(first, bootstrap, "POST")).toBe(201)

    // No key text ever reached the service's output, nor the data directory's admin file.
    expect((first.stdout + first.stderr).match(KEY_PATTERN)).toBeNull()

    // kill -9, restart: nothing is issued again, and the keys still work.
    await first.kill9()
    const second = await startService({ env })
    expect(second.stderr, second.output).toBe("")
    expect(await statusOf(second, successor, "GET")).toBe(200)
    expect(await statusOf(second, bootstrap, "GET")).toBe(200)
    expect(await statusOf(second, reader, "GET")).toBe(401)
    expect((await second.stop()).code).toBe(0)
    expect(Fs.existsSync(Path.join(dataDir, "animal-store.admin.json"))).toBe(false)

    // Service stopped: the command opens the directory itself.
    const offline = await createKey(env, "--name", "offline", "--scope", "read")
    const third = await startService({ env })
    expect(third.stderr, third.output).toBe("")
    expect(await statusOf(third, offline, "GET")).toBe(200)
    await third.stop()
  }, 120_000)
})

describe("the command itself", () => {
  it("--version prints the package's version, as package.json states it", async () => {
    const { version } = JSON.parse(Fs.readFileSync(Path.join(repoRoot, "package.json"), "utf8")) as { version: string }
    const result = await keysCli(["--version"], {})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe(`animal-store v${version}`)
  }, 30_000)
})

describe("a DATA_DIR without a database", () => {
  it("is refused, not made into a new store: a missing directory and an empty one stay as they were", async () => {
    const parent = tempDir()
    const missing = Path.join(parent, "mistyped")
    const empty = Path.join(parent, "empty")
    Fs.mkdirSync(empty)
    for (const dataDir of [missing, empty]) {
      const result = await keysCli(["list"], { STORE: "embedded", DATA_DIR: dataDir })
      expect(result.code, result.stderr).toBe(1)
      expect(result.stderr.trim()).toBe(
        `animal-store keys: DATA_DIR ${dataDir} holds no Animal Store database; \`npm start\` creates one there`
      )
    }
    expect(Fs.existsSync(missing)).toBe(false)
    expect(Fs.readdirSync(empty)).toEqual([])
  }, 60_000)
})

describe("a usage error", () => {
  it("is the one line that matters and where help is, not the whole help", async () => {
    const missing = await keysCli(["create"], {})
    expect(missing.code).toBe(1)
    expect(missing.stdout).toBe("")
    expect(missing.stderr).toBe(
      "animal-store keys create: Missing required flag: --name (see animal-store keys create --help)\n"
    )
    const unknown = await keysCli(["bogus"], {})
    expect(unknown.code).toBe(1)
    expect(unknown.stdout).toBe("")
    expect(unknown.stderr.trim().split("\n")).toHaveLength(1)
    expect(unknown.stderr).toMatch(/^animal-store keys: Unknown subcommand "bogus".* \(see animal-store keys --help\)$/m)
    // Asked for, help is still all there.
    const help = await keysCli(["create", "--help"], {})
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toContain("--expires-in")
  }, 30_000)
})

describe("the command reads only the store's settings", () => {
  it("a bad HTTP setting (CORS_ORIGINS, PORT) cannot stop it; a bad store setting still does", async () => {
    const dataDir = await initializedDataDir()
    const env = { STORE: "embedded", DATA_DIR: dataDir, CORS_ORIGINS: "garbage", PORT: "notaport", RATE_LIMIT: "fast" }
    const key = await createKey(env, "--name", "despite-http-settings")
    const listed = await keysCli(["list"], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(new RegExp(`^despite-http-settings\\s+${key.slice(3, 15)}\\s`, "m"))

    const badStore = await keysCli(["list"], { ...env, DATABASE_STATEMENT_TIMEOUT: "-" })
    expect(badStore.code).toBe(1)
    expect(badStore.stderr.trim()).toMatch(/^animal-store keys: invalid configuration: .*DATABASE_STATEMENT_TIMEOUT/)
  }, 60_000)
})

describe("memory store", () => {
  it("the command refuses: the keys live in the service process", async () => {
    const result = await keysCli(["list"], { STORE: "memory" })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^animal-store keys: STORE=memory keeps its keys inside the service process/)
  }, 30_000)
})

describe.skipIf(!postgresAvailable)("PostgreSQL store, two instances", () => {
  it("DATABASE_POOL_SIZE=1 still serves: the key cache's LISTEN connection is not taken from the requests' pool", async () => {
    const database = await createDatabase()
    const service = await startService({
      env: { STORE: "postgres", DATABASE_URL: databaseUrl(database), DATABASE_POOL_SIZE: "1", API_KEYS: "env-key-1" }
    })
    for (const method of ["POST", "GET", "GET"] as const) {
      expect(await statusOf(service, "env-key-1", method)).toBe(method === "POST" ? 201 : 200)
    }
  })

  it("an instance holds ONE LISTEN connection, for key changes, the event feed and webhook delivery alike", async () => {
    const database = await createDatabase()
    const service = await startService({ env: { STORE: "postgres", DATABASE_URL: databaseUrl(database), API_KEYS: "env-key-1" } })
    // Every connection of the instance outside its pool is a listener, named `animal-store …`.
    const listeners = async () =>
      (await query<{ application_name: string }>(
        database,
        `SELECT application_name FROM pg_stat_activity WHERE datname = '${database}' AND application_name LIKE 'animal-store%'`
      )).map((row) => row.application_name)
    await eventually(async () => (await listeners()).length > 0, 3_000, "the LISTEN connection")
    // The key cache, the SSE fan-out and the webhook dispatcher have all begun listening by now.
    await sleep(1_000)
    expect(await listeners()).toEqual([PgNotifications.APPLICATION_NAME])
    expect((await service.stop()).code).toBe(0)
  })

  it("keys made with the command work on both; a revocation reaches the other instance within 1 s; API_KEYS keeps working", async () => {
    const database = await createDatabase()
    const env = { STORE: "postgres", DATABASE_URL: databaseUrl(database) }
    const [a, b] = await Promise.all([0, 1].map(() => startService({ env: { ...env, API_KEYS: "env-key-1" } })))
    if (a === undefined || b === undefined) throw new Error("two instances expected")
    // API_KEYS set: nothing is issued.
    expect(a.stderr + b.stderr).toBe("")

    const writer = await createKey(env, "--name", "writer")
    const reader = await createKey(env, "--name", "reader", "--scope", "read", "--expires-in", "90d")
    for (const instance of [a, b]) {
      await eventually(async () => await statusOf(instance, writer, "POST") === 201, 1_000, "the new key on every instance")
      await eventually(async () => await statusOf(instance, reader, "GET") === 200, 1_000, "the new key on every instance")
      expect(await statusOf(instance, reader, "POST")).toBe(403)
    }

    // Only digests are stored.
    const rows = await query<Record<string, unknown>>(database, "SELECT * FROM api_keys")
    expect(rows).toHaveLength(2)
    expect(JSON.stringify(rows)).not.toContain(writer.slice(16))
    expect(JSON.stringify(rows)).not.toContain(reader.slice(16))

    // Rotation: the new key reaches both instances; the old one keeps working through the grace period.
    const rotated = await keysCli(["rotate", "reader", "--grace", "1h"], env)
    expect(rotated.code, rotated.stderr).toBe(0)
    const successor = rotated.stdout.trim()
    await eventually(async () => await statusOf(b, successor, "GET") === 200, 1_000, "the rotated key on the other instance")
    expect(await statusOf(b, reader, "GET")).toBe(200)
    const listed = await keysCli(["list"], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout.trim().split("\n").slice(1).map((line) => line.split(/\s+/).slice(0, 2).join(" ")).sort()).toEqual(
      [`reader ${successor.slice(3, 15)}`, `reader ${reader.slice(3, 15)}`, `writer ${writer.slice(3, 15)}`].sort()
    )
    expect(listed.stdout.match(KEY_PATTERN)).toBeNull()

    const revokedAt = performance.now()
    const revoked = await keysCli(["revoke", "writer"], env)
    expect(revoked.code, revoked.stderr).toBe(0)
    const seenAfterMs = await eventually(async () => await statusOf(b, writer, "GET") === 401, 1_000, "the revocation on the other instance", 20)
    expect(await statusOf(a, writer, "GET")).toBe(401)
    expect(await statusOf(b, "env-key-1", "POST")).toBe(201)
    console.info(
      `[keys] revocation seen by the second instance ${seenAfterMs.toFixed(0)} ms after the command returned ` +
        `(${(performance.now() - revokedAt).toFixed(0)} ms after it started)`
    )
    for (const instance of [a, b]) expect((await instance.stop()).code).toBe(0)
  }, 90_000)
})
