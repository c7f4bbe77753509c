/**
 * `npm run soak`: the full soak, on the embedded store and on PostgreSQL. For each:
 * 20,000 mixed creates and reads over 64 keep-alive connections against the real
 * process, `kill -9` half-way through the load, a restart on the same data, the rest of
 * the load; then every acknowledged pet must be present and identical, nothing stored
 * twice or in part, and the resident memory is reported for each run of the service.
 * Throughput and RSS are reported at the start (the first tenth of the operations), in
 * the middle (the tenth before the kill) and at the end (the last tenth): the store grows
 * all along, so a request that costs in proportion to it shows as falling throughput.
 *
 * Environment: SOAK_STORES (default "embedded,postgres"), SOAK_OPERATIONS (default
 * 20000), SOAK_CONNECTIONS (default 64); PostgreSQL from TEST_DATABASE_URL or the local
 * server. Writes bench/results/soak.json; exits 1 when any expectation broke.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { dropAllDatabases, postgresAvailable } from "../test/e2e/PgAdmin.ts"
import { killAll, removeTempDirs, repoRoot } from "../test/e2e/ServiceProcess.ts"
import { describeSoak, runSoak, type SoakReport } from "../test/e2e/Soak.ts"

const stores = (process.env["SOAK_STORES"] ?? "embedded,postgres").split(",").map((store) => store.trim())
const operations = Number(process.env["SOAK_OPERATIONS"] ?? 20_000)
const connections = Number(process.env["SOAK_CONNECTIONS"] ?? 64)

const reports: Array<SoakReport> = []
try {
  for (const store of stores) {
    if (store !== "embedded" && store !== "postgres") throw new Error(`SOAK_STORES: unknown store ${store}`)
    if (store === "postgres" && !postgresAvailable) {
      console.warn("[soak postgres] SKIPPED: no PostgreSQL server")
      continue
    }
    const report = await runSoak({ store, operations, connections })
    reports.push(report)
    console.info(describeSoak(report))
    for (const problem of report.problems) console.error(`  ${problem}`)
  }
} finally {
  await killAll()
  removeTempDirs()
  if (postgresAvailable) await dropAllDatabases()
}

const results = Path.join(repoRoot, "bench/results")
Fs.mkdirSync(results, { recursive: true })
Fs.writeFileSync(Path.join(results, "soak.json"), JSON.stringify({ at: new Date().toISOString(), reports }, null, 2))
process.exitCode = reports.some((report) => report.problems.length > 0) ? 1 : 0
