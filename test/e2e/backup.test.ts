/**
 * The documented PostgreSQL backup, run as written: the two commands of docs/storage.md's
 * "Backup and restore" are taken from the doc and run by a shell, `pg_dump` with
 * `DATABASE_URL` naming a database the service has used (pets, an order, a managed key),
 * `pg_restore` with it naming a fresh one. The service then starts on the restored
 * database, serves the same pets and order, and accepts the key; and every table of the
 * original is in the copy, whatever tables later migrations add.
 * Skipped, saying so, without a PostgreSQL server or `pg_dump`; on CI (CI=true) a missing
 * `pg_dump` fails instead.
 */
import { execFile, execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { createKey } from "./KeysCli.ts"
import { createDatabase, databaseUrl, postgresAvailable, query } from "./PgAdmin.ts"
import { createPet, listAll, repoRoot, startService, tempDir } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"

const run = promisify(execFile)
const RECIPE = "docs/storage.md"
const onCi = process.env["CI"] === "true"

const pgDumpInstalled = (() => {
  try {
    execFileSync("pg_dump", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

if (postgresAvailable && !pgDumpInstalled && !onCi) {
  console.warn("SKIPPED: the backup test needs pg_dump and pg_restore (apt-get install -y postgresql-client)")
}

/** The recipe's lines: the ```sh block of the "Backup and restore" section, the one that runs pg_dump. */
const recipeLines = (): { readonly dump: string; readonly restore: string } => {
  const doc = readFileSync(join(repoRoot, RECIPE), "utf8")
  const section = doc.slice(doc.indexOf("## Backup and restore"))
  const block = /```sh\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf("\n## ", 1)))?.[1]
  if (block === undefined) throw new Error(`${RECIPE} "Backup and restore" has no sh block`)
  const lines = block.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"))
  const dump = lines.find((line) => line.startsWith("pg_dump "))
  const restore = lines.find((line) => line.startsWith("pg_restore "))
  if (dump === undefined || restore === undefined || lines.length !== 2) {
    throw new Error(`${RECIPE}'s backup block should be one pg_dump and one pg_restore line: ${JSON.stringify(lines)}`)
  }
  return { dump, restore }
}

/** Runs one line of the recipe in `cwd`, as a shell would, with `DATABASE_URL` set. */
const shell = async (line: string, cwd: string, url: string): Promise<void> => {
  await run("sh", ["-c", line], { cwd, env: { PATH: process.env["PATH"] ?? "", DATABASE_URL: url } }).catch(
    (error: { stderr?: string }) => {
      throw new Error(`\`${line}\` failed:\n${error.stderr ?? String(error)}`)
    }
  )
}

const tables = async (database: string): Promise<Array<string>> =>
  (await query<{ table_name: string }>(
    database,
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
  )).map((row) => row.table_name)

cleanUpProcesses()

describe.skipIf(!postgresAvailable || (!pgDumpInstalled && !onCi))("the documented PostgreSQL backup and restore", () => {
  it("a restored database starts, serves the same pets and order, and accepts the same key", async () => {
    expect(pgDumpInstalled, "pg_dump is required on CI").toBe(true)
    const { dump, restore } = recipeLines()
    const original = await createDatabase()
    const env = { STORE: "postgres", DATABASE_URL: databaseUrl(original), API_KEYS: "bootstrap-key" }
    const before = await startService({ env })
    const key = await createKey({ STORE: "postgres", DATABASE_URL: databaseUrl(original) }, "--name", "backup")
    const pets = []
    for (const [i, name] of ["Rex", "Fido", "Nemo"].entries()) {
      pets.push(await createPet(before, "bootstrap-key", { name, categoryId: 10 + i, status: "available" }))
    }
    const order = await before.request("POST", "/v1/store/orders", { apiKey: "bootstrap-key", body: { petId: pets[0]!.id } })
    expect(order.status, order.text).toBe(201)
    expect((await before.stop()).code).toBe(0)

    const dir = tempDir("animal-store-backup-")
    await shell(dump, dir, databaseUrl(original))
    const copy = await createDatabase()
    await shell(restore, dir, databaseUrl(copy))

    // No API_KEYS: the restored key must be what lets a client in.
    const after = await startService({ env: { STORE: "postgres", DATABASE_URL: databaseUrl(copy) } })
    expect(after.stderr, "a restored store with a key issues none").toBe("")
    // The ordered pet is pending now, a version on.
    expect((await listAll(after, key)).pets).toEqual(pets.map((pet, i) => i === 0 ? { ...pet, status: "pending", version: 2 } : pet))
    const restoredOrder = await after.request("GET", `/v1/store/orders/${(order.json as { id: number }).id}`, { apiKey: key })
    expect(restoredOrder.json).toEqual(order.json)
    const created = await after.request("POST", "/v1/pets", { apiKey: key, body: { name: "Kitty", categoryId: 1 } })
    expect(created.status, created.text).toBe(201)
    expect((created.json as { id: number }).id).toBe(pets.length + 1)
    expect(await tables(copy)).toEqual(await tables(original))
  }, 120_000)
})
