/**
 * The `animal-store webhooks` command with real processes: subscriptions added, listed,
 * rotated and removed on PostgreSQL (seen by a running service over HTTP) and on an
 * embedded data directory; the URL rules as the service applies them; nothing to manage
 * on the memory store.
 */
import { describe, expect, it } from "vitest"
import { webhooksCli } from "./KeysCli.ts"
import { createDatabase, databaseUrl, postgresAvailable } from "./PgAdmin.ts"
import { initializedDataDir, startService } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"

cleanUpProcesses()

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/

describe.skipIf(!postgresAvailable)("PostgreSQL store", () => {
  it("add prints the secret alone, once; list, rotate and remove; a running service sees the same subscriptions", async () => {
    const env = { STORE: "postgres", DATABASE_URL: databaseUrl(await createDatabase()) }
    const allowed = { ...env, WEBHOOK_ALLOW_PRIVATE: "true" }

    const added = await webhooksCli(["add", "--url", "http://127.0.0.1:9/hook", "--types", "pet.created,order.placed"], allowed)
    expect(added.code, added.stderr).toBe(0)
    const secret = added.stdout.trim()
    expect(secret).toMatch(SECRET)
    expect(added.stderr).toContain("Subscribed webhook 1 http://127.0.0.1:9/hook (pet.created,order.placed)")
    expect(added.stderr).not.toContain(secret)

    // Without WEBHOOK_ALLOW_PRIVATE the service's rules refuse plain http and private hosts.
    const refused = await webhooksCli(["add", "--url", "https://127.0.0.1/hook", "--types", "pet.created"], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("url: must not point at a loopback address")
    const badTypes = await webhooksCli(["add", "--url", "http://127.0.0.1:9/", "--types", "pet.eaten"], allowed)
    expect(badTypes.code).toBe(1)

    const listed = await webhooksCli(["list"], env)
    expect(listed.code, listed.stderr).toBe(0)
    const lines = listed.stdout.trim().split("\n")
    expect(lines[0]).toMatch(/^ID\s+URL\s+TYPES\s+CREATED\s+STATE$/)
    expect(lines.slice(1)).toHaveLength(1)
    expect(lines[1]).toMatch(/^1\s+http:\/\/127\.0\.0\.1:9\/hook\s+pet\.created,order\.placed\s+\S+Z\s+active$/)
    expect(listed.stdout).not.toContain("whsec_")

    const service = await startService({ env: { ...env, API_KEYS: "env-key-1" } })
    const seen = await service.request("GET", "/v1/webhooks", { apiKey: "env-key-1" })
    expect(seen.status).toBe(200)
    expect(seen.json).toMatchObject([{ id: 1, url: "http://127.0.0.1:9/hook", types: ["pet.created", "order.placed"], state: "active" }])

    const rotated = await webhooksCli(["rotate", "1"], env)
    expect(rotated.code, rotated.stderr).toBe(0)
    expect(rotated.stdout.trim()).toMatch(SECRET)
    expect(rotated.stdout.trim()).not.toBe(secret)
    expect(rotated.stderr).toMatch(/The old one still signs until \S+Z\./)

    const removed = await webhooksCli(["remove", "1"], env)
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout).toContain("Removed webhook 1")
    expect((await service.request("GET", "/v1/webhooks", { apiKey: "env-key-1" })).json).toEqual([])
    const again = await webhooksCli(["remove", "1"], env)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("webhook 1 not found")
  })
})

describe("embedded and memory stores", () => {
  it("manages the subscriptions of a stopped embedded store in its data directory", async () => {
    const env = { STORE: "embedded", DATA_DIR: await initializedDataDir(), WEBHOOK_ALLOW_PRIVATE: "true" }
    const added = await webhooksCli(["add", "--url", "http://127.0.0.1:9/hook", "--types", "pet.deleted"], env)
    expect(added.code, added.stderr).toBe(0)
    expect(added.stdout.trim()).toMatch(SECRET)
    const listed = await webhooksCli(["list"], env)
    expect(listed.stdout).toMatch(/\n1\s+http:\/\/127\.0\.0\.1:9\/hook\s+pet\.deleted\s/)
  })

  it("manages the subscriptions of a running embedded service through its admin port, judged by the service's rules", async () => {
    const env = { STORE: "embedded", DATA_DIR: await initializedDataDir() }
    // The service allows private URLs, the command's own environment does not: the service judges.
    const service = await startService({ env: { ...env, API_KEYS: "env-key-1", WEBHOOK_ALLOW_PRIVATE: "true" } })
    const seen = async () => (await service.request("GET", "/v1/webhooks", { apiKey: "env-key-1" })).json

    const added = await webhooksCli(["add", "--url", "http://127.0.0.1:9/hook", "--types", "pet.created,order.placed"], env)
    expect(added.code, added.stderr).toBe(0)
    const secret = added.stdout.trim()
    expect(secret).toMatch(SECRET)
    expect(added.stderr).toContain("Subscribed webhook 1 http://127.0.0.1:9/hook (pet.created,order.placed)")
    expect(await seen()).toMatchObject([{ id: 1, url: "http://127.0.0.1:9/hook", types: ["pet.created", "order.placed"] }])
    const badTypes = await webhooksCli(["add", "--url", "http://127.0.0.1:9/", "--types", "pet.eaten"], env)
    expect(badTypes.code).toBe(1)

    const listed = await webhooksCli(["list"], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(/\n1\s+http:\/\/127\.0\.0\.1:9\/hook\s+pet\.created,order\.placed\s+\S+Z\s+active\n$/)
    expect(listed.stdout).not.toContain("whsec_")

    const rotated = await webhooksCli(["rotate", "1"], env)
    expect(rotated.code, rotated.stderr).toBe(0)
    expect(rotated.stdout.trim()).toMatch(SECRET)
    expect(rotated.stdout.trim()).not.toBe(secret)
    expect(rotated.stderr).toMatch(/The old one still signs until \S+Z\./)

    const removed = await webhooksCli(["remove", "1"], env)
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout).toContain("Removed webhook 1 http://127.0.0.1:9/hook")
    expect(await seen()).toEqual([])
    const again = await webhooksCli(["remove", "1"], env)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("webhook 1 not found")
    expect((service.stdout + service.stderr).match(/whsec_/)).toBeNull()

    // Stopped, the service's directory is the command's again, with the command's own rules.
    expect((await service.stop()).code).toBe(0)
    const refused = await webhooksCli(["add", "--url", "http://127.0.0.1:9/hook", "--types", "pet.created"], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("url: must")
    expect((await webhooksCli(["list"], env)).stdout.trim()).toBe("ID  URL  TYPES  CREATED  STATE")
  })

  it("has nothing to manage on the memory store", async () => {
    const result = await webhooksCli(["list"], { STORE: "memory" })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("STORE=memory keeps its webhooks inside the service process")
  })
})
