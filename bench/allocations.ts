/**
 * Bytes allocated and promoted per request, from V8's own GC trace (`--trace-gc-nvp`):
 * every scavenge and mark-compact reports the bytes allocated since the one before and
 * the bytes it promoted to the old generation. What a request allocates is what the
 * young generation's collector has to go through, and what it promotes is what the old
 * generation's has to mark and sweep later; unlike requests per second or CPU time, both
 * are counts of the code's own doing, so they do not move with the load other jobs put
 * on the machine.
 *
 * Servers, each as the http section starts them (Animal Store as `npm start` runs it, the
 * Effect floor under the same node flags): Animal Store on memory and on PostgreSQL, the
 * Effect floor on a Map and on PostgreSQL through @effect/sql-pg. Each is seeded with
 * 1,000 pets by POST, warmed up, then loaded with a fixed number of requests per
 * scenario at 50 connections; the GC lines its stdout got during those requests are
 * summed. The first collection of a window also counts what the warm-up left in the
 * young generation: at most one young generation (8 MB) over the requests counted.
 */
import { readFileSync } from "node:fs"
import { not2xx, seededFixedRuns, startLoadGenerator } from "./cannon-client.ts"
import { fmt, fmtRatio, stopChild } from "./lib.ts"
import { createDatabase, dropDatabase } from "./pg-admin.ts"
import type { Report } from "./report.ts"
import type { ScenarioName } from "./scenarios.ts"
import { type Server, startEffect, startService } from "./servers.ts"

export interface AllocationsOptions {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  readonly scenarios: ReadonlyArray<ScenarioName>
  /** Requests counted per scenario and server. */
  readonly requests: number
  /** Admin URL of the local PostgreSQL server, or undefined to leave out the PostgreSQL servers. */
  readonly pgUrl: string | undefined
}

const PETS = 1_000
const CONNECTIONS = 50
const WARMUP_REQUESTS = 5_000
// node with --trace-gc-nvp before the server's own flags (NODE_OPTIONS may not carry it).
// V8 writes the trace to stdout, which the servers here send to their log file.
const TRACE = ["sh", "-c", `exec "$0" --trace-gc-nvp "$@"`]

type Kind = "as-memory" | "floor-map" | "as-postgres" | "floor-sqlpg"

const SERVERS: ReadonlyArray<{ readonly kind: Kind; readonly label: string; readonly postgres: boolean }> = [
  { kind: "as-memory", label: "Animal Store memory", postgres: false },
  { kind: "floor-map", label: "Effect floor + Map", postgres: false },
  { kind: "as-postgres", label: "Animal Store postgres", postgres: true },
  { kind: "floor-sqlpg", label: "Effect floor + sql-pg", postgres: true }
]

const start = (kind: Kind, options: AllocationsOptions, databaseUrl: string): Promise<Server> => {
  const { apiKey, work } = options
  switch (kind) {
    case "as-memory":
      return startService({ name: "allocations-memory", work, apiKey, env: { STORE: "memory" }, wrapper: TRACE })
    case "as-postgres":
      return startService({ name: "allocations-postgres", work, apiKey, env: { STORE: "postgres", DATABASE_URL: databaseUrl }, wrapper: TRACE })
    case "floor-map":
      return startEffect({ name: "allocations-floor-map", work, apiKey, store: "map", wrapper: TRACE })
    case "floor-sqlpg":
      return startEffect({ name: "allocations-floor-sqlpg", work, apiKey, store: "sqlpg", databaseUrl, wrapper: TRACE })
  }
}

/** The GC lines of a log: `gc=s` (scavenge) or `gc=mc`/`gc=ms` (mark-compact), with `allocated=` and `promoted=`. */
const gcLines = (server: Server): ReadonlyArray<Record<string, string>> =>
  readFileSync(server.logPath ?? "", "utf8").split("\n")
    .filter((line) => line.includes(" gc=") && line.includes("allocated="))
    .map((line) => Object.fromEntries(line.trim().split(/\s+/).map((pair) => pair.split("=") as [string, string])))

interface Measured {
  readonly allocated: number
  readonly promoted: number
  readonly scavenges: number
  readonly markCompacts: number
}

export const allocationsSection = async (options: AllocationsOptions): Promise<Record<string, unknown>> => {
  const { report } = options
  report.heading(
    `Allocation per request (V8's --trace-gc-nvp; ${options.requests.toLocaleString("en-US")} requests counted per scenario and server after ${WARMUP_REQUESTS.toLocaleString("en-US")}, ${CONNECTIONS} connections, ${PETS.toLocaleString("en-US")} pets)`
  )
  if (options.pgUrl === undefined) report.note("allocations: the PostgreSQL servers left out: no usable PostgreSQL server")
  const servers = SERVERS.filter((server) => !server.postgres || options.pgUrl !== undefined)
  const results: Partial<Record<Kind, Partial<Record<ScenarioName, Measured>>>> = {}
  const loader = startLoadGenerator()
  try {
    for (const { kind, label, postgres } of servers) {
      const db = postgres && options.pgUrl !== undefined
        ? await createDatabase(options.pgUrl, `allocations_${kind.replace(/-/g, "_")}`)
        : undefined
      try {
        const server = await start(kind, options, db?.url ?? "")
        try {
          const load = await seededFixedRuns(loader, {
            label,
            port: server.port,
            apiKey: options.apiKey,
            connections: CONNECTIONS,
            pets: PETS
          })
          const own: Partial<Record<ScenarioName, Measured>> = {}
          results[kind] = own
          for (const scenario of options.scenarios) {
            await load(scenario, WARMUP_REQUESTS)
            const before = gcLines(server).length
            const result = await load(scenario, options.requests)
            const lines = gcLines(server).slice(before)
            const bad = not2xx(result)
            if (bad > 0) report.note(`allocations: ${label} ${scenario}: ${bad} answers were not 2xx`)
            const sum = (field: string) => lines.reduce((total, line) => total + Number(line[field] ?? 0), 0)
            own[scenario] = {
              allocated: sum("allocated") / result.requests,
              promoted: sum("promoted") / result.requests,
              scavenges: lines.filter((line) => line["gc"] === "s").length,
              markCompacts: lines.filter((line) => line["gc"] !== "s").length
            }
          }
        } finally {
          await stopChild(server.child, 30_000)
        }
      } finally {
        if (db !== undefined && options.pgUrl !== undefined) await dropDatabase(options.pgUrl, db.name)
      }
    }
  } finally {
    await loader.stop()
  }

  const kb = (bytes: number | undefined) => (bytes === undefined ? "-" : fmt(bytes / 1024))
  const of = (kind: Kind, scenario: ScenarioName) => results[kind]?.[scenario]
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b <= 0 ? undefined : a / b)
  report.table(
    ["scenario", "server", "allocated KB/req", "promoted KB/req", "scavenges", "mark-compacts", "allocated vs its floor"],
    options.scenarios.flatMap((scenario) =>
      servers.map(({ kind, label }) => {
        const own = of(kind, scenario)
        const floor = of(kind === "as-memory" ? "floor-map" : kind === "as-postgres" ? "floor-sqlpg" : kind, scenario)
        return [
          scenario,
          label,
          kb(own?.allocated),
          kb(own?.promoted),
          String(own?.scavenges ?? "-"),
          String(own?.markCompacts ?? "-"),
          kind.startsWith("as-") ? fmtRatio(ratio(own?.allocated, floor?.allocated)) : "-"
        ]
      })
    )
  )
  const minus = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a - b)
  report.table(
    ["scenario", "floor Map", "+ driver (floor sql-pg - floor Map)", "+ features (AS memory - floor Map)", "+ AS SQL adapter (AS pg - AS memory - driver)", "AS postgres"],
    options.scenarios.map((scenario) => {
      const floorMap = of("floor-map", scenario)?.allocated
      const driver = minus(of("floor-sqlpg", scenario)?.allocated, floorMap)
      const features = minus(of("as-memory", scenario)?.allocated, floorMap)
      const adapter = minus(minus(of("as-postgres", scenario)?.allocated, of("as-memory", scenario)?.allocated), driver)
      return [scenario, kb(floorMap), kb(driver), kb(features), kb(adapter), kb(of("as-postgres", scenario)?.allocated)]
    })
  )
  report.say("   KB allocated per request, split into layers by differences between servers one layer apart.")
  return results
}
