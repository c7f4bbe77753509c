/**
 * PostgreSQL housekeeping for the benchmarks, through node-postgres: throwaway
 * databases (created, then dropped with FORCE), seeding pets straight in SQL with
 * generate_series, and the CPU time of one database's backends. Talks to 127.0.0.1 only.
 */
import { connect } from "node:net"
import pg from "pg"
import { cpuMillisOf } from "./lib.ts"

/** Whether the server at `url` is on this machine and listening; if not, why. */
export const checkPgServer = async (url: string): Promise<{ readonly ok: true } | { readonly ok: false; readonly why: string }> => {
  const parsed = new URL(url)
  if (parsed.hostname !== "127.0.0.1" && parsed.hostname !== "localhost") {
    return { ok: false, why: `BENCH_PG_URL must point at 127.0.0.1 (got ${parsed.hostname})` }
  }
  const port = Number(parsed.port || 5432)
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port, timeout: 1_000 })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.once("connect", () => done(true))
    socket.once("timeout", () => done(false))
    socket.once("error", () => done(false))
  })
  return reachable ? { ok: true } : { ok: false, why: `nothing listens on 127.0.0.1:${port}` }
}

const withClient = async <A>(url: string, use: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/** The URL of database `name` on the same server as `adminUrl`. */
export const databaseUrl = (adminUrl: string, name: string): string => {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** A fresh, uniquely named database; answers its URL. */
export const createDatabase = async (adminUrl: string, label: string): Promise<{ readonly name: string; readonly url: string }> => {
  const name = `animal_store_bench_${label}_${process.pid}_${Date.now().toString(36)}`
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`))
  return { name, url: databaseUrl(adminUrl, name) }
}

export const dropDatabase = async (adminUrl: string, name: string): Promise<void> => {
  try {
    await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`))
  } catch {
    // Best effort at clean-up: a failure here must not hide the run's results.
  }
}

/**
 * Inserts `count` pets into an empty `pets` table (Animal Store's or the Fastify peer's:
 * the same columns) and ANALYZEs it, so the planner sees the real size. The rows are
 * seed.ts's seedPet(1..count): ids 1..count, statuses in rotation. Answers the id
 * range actually stored.
 */
export const seedPets = (url: string, count: number): Promise<{ readonly idMin: number; readonly idMax: number }> =>
  withClient(url, async (client) => {
    await client.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'pet-' || i, 1 + i % 50, (ARRAY['available', 'pending', 'sold', NULL])[1 + i % 4]
       FROM generate_series(1, $1::int) AS i ORDER BY i`,
      [count]
    )
    await client.query("ANALYZE pets")
    const result = await client.query<{ min: string; max: string; count: string }>(
      "SELECT min(id)::text AS min, max(id)::text AS max, count(*)::text AS count FROM pets"
    )
    const row = result.rows[0]!
    if (Number(row.count) !== count || Number(row.max) - Number(row.min) + 1 !== count) {
      throw new Error(`seeding stored ${row.count} pets with ids ${row.min}..${row.max}, expected ${count} contiguous`)
    }
    return { idMin: Number(row.min), idMax: Number(row.max) }
  })

/** Process ids of the server's backends connected to database `name` (pg_stat_activity). */
export const backendPids = (adminUrl: string, name: string): Promise<ReadonlyArray<number>> =>
  withClient(adminUrl, async (client) =>
    (await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1", [name])).rows.map((row) =>
      row.pid
    ))

/**
 * CPU time of the backends serving database `name`, from now: `took()` answers the
 * milliseconds they used since, a backend that connected meanwhile counted from its
 * start (one that disconnected meanwhile is lost). The other databases' backends, and
 * the server's shared processes, are left out: other work on the same server does not
 * count.
 */
export const databaseCpu = async (adminUrl: string, name: string): Promise<{ readonly took: () => Promise<number> }> => {
  const before = new Map((await backendPids(adminUrl, name)).map((pid) => [pid, cpuMillisOf(pid) ?? 0]))
  return {
    took: async () => {
      let total = 0
      for (const pid of await backendPids(adminUrl, name)) total += (cpuMillisOf(pid) ?? 0) - (before.get(pid) ?? 0)
      return total
    }
  }
}
