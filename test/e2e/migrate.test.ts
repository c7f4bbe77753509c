/**
 * `npm run migrate` (`animal-store migrate`, the bundle) with real processes, on PostgreSQL and on a data
 * directory: `status` lists each migration as applied or pending, `apply` runs the pending
 * ones, and a service started with MIGRATE=off migrates nothing: on a schema not migrated
 * it stops at once saying so, and once `apply` has run it serves.
 */
import * as Path from "node:path"
import * as Fs from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as SchemaMigrations from "../../src/adapters/postgres/SchemaMigrations.ts"
import { cleanUpProcesses } from "./Cleanup.ts"
import { createDatabase, databaseUrl, postgresAvailable } from "./PgAdmin.ts"
import { animalStore } from "./KeysCli.ts"
import { startService, tempDir } from "./ServiceProcess.ts"

cleanUpProcesses()

const MIGRATIONS = (await Effect.runPromise(SchemaMigrations.loader)).length
const LATEST = (await Effect.runPromise(SchemaMigrations.loader)).at(-1)![0].toString().padStart(4, "0")

const migrate = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>) => animalStore(["migrate", ...args], env)

const statusLines = (stdout: string) => stdout.trim().split("\n").map((line) => line.split(/\s+/))

const migrateThenStart = async (env: Record<string, string>) => {
  // MIGRATE=off on a schema nothing migrated: stop at once, saying what to run.
  const refused = await startService({ env: { ...env, API_KEYS: "k", MIGRATE: "off" }, waitUntilListening: false })
  expect(await refused.waitForExit(30_000), refused.output).toEqual({ code: 1, signal: null })
  expect(refused.stderr.trim(), refused.output).toBe(
    "Animal Store stopped: MIGRATE=off (run `npm run migrate -- apply` first): the database schema is missing or out of date: " +
      `it records no migration, this release needs ${LATEST}`
  )

  const before = await migrate(["status"], env)
  expect(before.code, before.stderr).toBe(0)
  expect(statusLines(before.stdout)).toHaveLength(MIGRATIONS)
  expect(statusLines(before.stdout).every(([name, state]) => /^\d{4}_\w+$/.test(name!) && state === "pending")).toBe(true)

  const applied = await migrate(["apply"], env)
  expect(applied.code, applied.stderr).toBe(0)
  expect(applied.stdout.trim().split("\n")).toHaveLength(MIGRATIONS)
  expect(applied.stdout).toMatch(/^Applied 0001_create_pets$/m)
  const after = await migrate(["status"], env)
  expect(statusLines(after.stdout).map(([, state]) => state)).toEqual(Array(MIGRATIONS).fill("applied"))
  const again = await migrate(["apply"], env)
  expect(again.code, again.stderr).toBe(0)
  expect(again.stdout.trim()).toBe("Nothing to apply: every migration is recorded")

  const service = await startService({ env: { ...env, API_KEYS: "k", MIGRATE: "off" } })
  const created = await service.request("POST", "/v1/pets", { apiKey: "k", body: { name: "Rex", categoryId: 1 } })
  expect(created.status, service.output).toBe(201)
  expect((await service.stop()).code).toBe(0)
}

describe.skipIf(!postgresAvailable)("PostgreSQL", () => {
  it("status, apply, and a start with MIGRATE=off before and after", async () => {
    await migrateThenStart({ STORE: "postgres", DATABASE_URL: databaseUrl(await createDatabase()) })
  }, 120_000)
})

describe("a data directory", () => {
  it("status refuses a directory without a database; apply, and a start with MIGRATE=off before and after", async () => {
    const dataDir = Path.join(tempDir(), "data")
    const missing = await migrate(["status"], { STORE: "embedded", DATA_DIR: dataDir })
    expect(missing.code).toBe(1)
    expect(missing.stderr.trim()).toBe(
      `animal-store migrate: DATA_DIR ${dataDir} holds no Animal Store database; \`npm start\` creates one there`
    )
    expect(Fs.existsSync(dataDir)).toBe(false)
    await migrateThenStart({ STORE: "embedded", DATA_DIR: dataDir })
  }, 120_000)
})
