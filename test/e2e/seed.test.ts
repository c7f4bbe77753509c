/**
 * `npm run seed` (scripts/seed.ts) against a real service: demo pets across every status
 * and several categories, and orders in every order status, through the HTTP API.
 */
import { execFile } from "node:child_process"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { cleanUpProcesses } from "./Cleanup.ts"
import { nodeBin, repoRoot, startService } from "./ServiceProcess.ts"

cleanUpProcesses()

const seed = (env: Readonly<Record<string, string>>) =>
  new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(nodeBin, [Path.join(repoRoot, "scripts/seed.ts")], { env: { PATH: process.env["PATH"] ?? "", ...env }, timeout: 60_000 }, (error, _, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stderr }))
  })

describe("npm run seed", () => {
  it("adds a few dozen pets across statuses and categories, and orders in every status", async () => {
    const service = await startService({ env: { STORE: "memory", API_KEYS: "seed-key" } })
    const result = await seed({ ANIMAL_STORE_URL: service.baseUrl, API_KEYS: "seed-key" })
    expect(result.code, result.stderr).toBe(0)

    const inventory = (await service.request("GET", "/v1/store/inventory", { apiKey: "seed-key" })).json as Record<string, number>
    expect(Object.values(inventory).reduce((a, b) => a + b, 0)).toBe(36)
    for (const status of ["available", "pending", "sold", "none"]) expect(inventory[status], status).toBeGreaterThan(0)
    const pets = (await service.request("GET", "/v1/pets?limit=100", { apiKey: "seed-key" })).json as Array<{ categoryId: number }>
    expect(new Set(pets.map((pet) => pet.categoryId)).size).toBe(4)
    const orders = (await service.request("GET", "/v1/store/orders", { apiKey: "seed-key" })).json as Array<{ status: string }>
    expect(new Set(orders.map((order) => order.status))).toEqual(new Set(["placed", "approved", "delivered", "cancelled"]))

    // Without a key it says what to set.
    const keyless = await seed({ ANIMAL_STORE_URL: service.baseUrl })
    expect(keyless.code).toBe(1)
    expect(keyless.stderr.trim()).toBe("seed: set API_KEY (a write key), or API_KEYS")
  }, 60_000)
})
