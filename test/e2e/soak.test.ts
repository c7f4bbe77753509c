/**
 * A short soak on each durable store (the full one is `npm run soak`, bench/soak.ts):
 * mixed creates and reads over 16 keep-alive connections, `kill -9` half-way, a
 * restart on the same data, the rest of the load; then every acknowledged pet is
 * present and identical, nothing is stored twice or in part, and the resident memory
 * stays within a bound.
 */
import { afterAll, describe, expect, it } from "vitest"
import { dropAllDatabases, postgresAvailable } from "./PgAdmin.ts"
import { killAll, removeTempDirs } from "./ServiceProcess.ts"
import { describeSoak, runSoak } from "./Soak.ts"

/**
 * Resident memory each run of the service may end its load with, per store: above what
 * was measured (embedded 305-324 MiB with PGlite on its own thread; PostgreSQL about
 * 0.2 GiB), well below what a leak over the run would reach.
 */
const RSS_BOUND_MIB = { embedded: 448, postgres: 384 } as const

afterAll(async () => {
  await killAll()
  removeTempDirs()
  if (postgresAvailable) await dropAllDatabases()
})

describe("soak, short", () => {
  it.each(["embedded", "postgres"] as const)("%s: 2,000 operations, kill -9 half-way, nothing acknowledged lost", async (store) => {
    if (store === "postgres" && !postgresAvailable) return
    const report = await runSoak({ store, operations: 2_000, connections: 16 })
    console.info(describeSoak(report))
    expect(report.problems).toEqual([])
    expect(report.acknowledged).toBeGreaterThan(500)
    expect(report.reads).toBeGreaterThan(300)
    for (const rss of report.rss) if (rss !== undefined) expect(rss.last).toBeLessThan(RSS_BOUND_MIB[store])
  }, 120_000)
})
