/**
 * Keyset paging at scale on PostgreSQL, through Animal Store's HTTP API: a throwaway
 * database per size, filled with generate_series, then the first page and a page 90%
 * of the way through the ids (after id 900,000 of 10^6), unfiltered and filtered by
 * status. The deep cursor is built the way the service builds it (base64url of
 * "after:<id>"), checked first against the cursor of a real next link. One connection,
 * so the figures are latencies rather than throughput under contention.
 */
import { type LoadGenerator, startLoadGenerator } from "./cannon-client.ts"
import { fmt, fmtRatio, median, stopChild } from "./lib.ts"
import { createDatabase, dropDatabase, seedPets } from "./pg-admin.ts"
import type { Report } from "./report.ts"
import { startService } from "./servers.ts"

export interface ScaleOptions {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  readonly pgUrl: string
  readonly sizes: ReadonlyArray<number>
  /** Each page is measured this many times, in alternating order. */
  readonly rounds: number
  readonly seconds: number
  readonly warmupSeconds: number
}

export interface ScaleRow {
  readonly size: number
  readonly filter: "none" | "status=sold"
  readonly page: "first" | "deep"
  readonly afterId: number | undefined
  readonly path: string
  readonly p50: number
  readonly p99: number
  readonly rps: number
  readonly bad: number
}

const cursorAfter = (id: number): string => Buffer.from(`after:${id}`, "utf8").toString("base64url")

export const scaleSection = async (options: ScaleOptions): Promise<Record<string, unknown>> => {
  const { report, apiKey } = options
  const sizes = options.sizes.map((size) => size.toLocaleString("en-US")).join(" and ")
  report.heading(`Keyset paging at scale (PostgreSQL, ${sizes} pets, 1 connection, Animal Store HTTP API)`)
  const headers = { authorization: `Bearer ${apiKey}` }
  const rows: Array<ScaleRow> = []
  const loader: LoadGenerator = startLoadGenerator()
  try {
    for (const size of options.sizes) {
      const db = await createDatabase(options.pgUrl, `scale${size}`)
      const server = await startService({
        name: `scale-${size}`,
        work: options.work,
        apiKey,
        env: { STORE: "postgres", DATABASE_URL: db.url }
      })
      try {
        const seeding = performance.now()
        await seedPets(db.url, size)
        report.say(`   ${size.toLocaleString("en-US")} pets inserted with generate_series in ${fmt((performance.now() - seeding) / 1000)} s`)
        const base = `http://127.0.0.1:${server.port}`
        // The service's own next link must carry the cursor this section constructs.
        const first = await fetch(`${base}/v1/pets?limit=20`, { headers })
        const firstPets = (await first.json()) as Array<{ readonly id: number }>
        const issued = /cursor=([A-Za-z0-9_-]+)/.exec(first.headers.get("link") ?? "")?.[1]
        if (issued !== cursorAfter(firstPets[firstPets.length - 1]!.id)) {
          throw new Error(`the service's cursor ${issued} is not ${cursorAfter(firstPets[firstPets.length - 1]!.id)}`)
        }
        const deepId = Math.floor(size * 0.9)
        const pages = [
          { filter: "none", page: "first", afterId: undefined, path: "/v1/pets?limit=20" },
          { filter: "none", page: "deep", afterId: deepId, path: `/v1/pets?limit=20&cursor=${cursorAfter(deepId)}` },
          { filter: "status=sold", page: "first", afterId: undefined, path: "/v1/pets?status=sold&limit=20" },
          {
            filter: "status=sold",
            page: "deep",
            afterId: deepId,
            path: `/v1/pets?status=sold&limit=20&cursor=${cursorAfter(deepId)}`
          }
        ] as const
        for (const page of pages) {
          const pets = (await (await fetch(`${base}${page.path}`, { headers })).json()) as Array<{ readonly id: number }>
          if (pets.length !== 20 || (page.afterId !== undefined && pets[0]!.id <= page.afterId)) {
            throw new Error(`${page.path} returned ${pets.length} pets starting at ${pets[0]?.id}`)
          }
        }
        const samples = new Map<string, Array<{ readonly p50: number; readonly p99: number; readonly rps: number; readonly bad: number }>>()
        for (let round = 0; round < options.rounds; round++) {
          for (const page of round % 2 === 0 ? pages : [...pages].reverse()) {
            const args = {
              port: server.port,
              scenario: "path" as const,
              connections: 1,
              seconds: options.warmupSeconds,
              apiKey,
              idMin: 1,
              idMax: 1,
              seed: 1,
              path: page.path
            }
            await loader.run(args)
            const result = await loader.run({ ...args, seconds: options.seconds })
            const bad = result.errors + Object.entries(result.statuses).filter(([status]) => status !== "200")
              .reduce((sum, [, count]) => sum + count, 0)
            const list = samples.get(page.path) ?? []
            list.push({ p50: result.latencyMs.p50, p99: result.latencyMs.p99, rps: result.rps, bad })
            samples.set(page.path, list)
          }
        }
        for (const page of pages) {
          const list = samples.get(page.path) ?? []
          rows.push({
            size,
            filter: page.filter,
            page: page.page,
            afterId: page.afterId,
            path: page.path,
            p50: median(list.map((sample) => sample.p50)),
            p99: median(list.map((sample) => sample.p99)),
            rps: median(list.map((sample) => sample.rps)),
            bad: list.reduce((sum, sample) => sum + sample.bad, 0)
          })
        }
      } finally {
        await stopChild(server.child)
        await dropDatabase(options.pgUrl, db.name)
      }
    }
  } finally {
    await loader.stop()
  }

  const find = (size: number, filter: ScaleRow["filter"], page: ScaleRow["page"]) =>
    rows.find((row) => row.size === size && row.filter === filter && row.page === page)
  const smallest = Math.min(...options.sizes)
  report.table(
    ["pets", "filter", "page", "p50 ms", "p99 ms", "bad", "p50 deep / first", `p50 / ${smallest.toLocaleString("en-US")}-pet table`],
    rows.map((row) => {
      const firstPage = find(row.size, row.filter, "first")
      const small = find(smallest, row.filter, row.page)
      return [
        row.size.toLocaleString("en-US"),
        row.filter,
        row.afterId === undefined ? "first" : `after id ${row.afterId.toLocaleString("en-US")}`,
        fmt(row.p50),
        fmt(row.p99),
        String(row.bad),
        row.page === "deep" && firstPage !== undefined ? fmtRatio(row.p50 / firstPage.p50) : "",
        row.size !== smallest && small !== undefined ? fmtRatio(row.p50 / small.p50) : ""
      ]
    })
  )
  report.say(`   medians over ${options.rounds} rounds of (${options.warmupSeconds} s warm-up + ${options.seconds} s) per page.`)
  report.say("   The filtered deep page starts after the same id, so past 90% of the sold pets (a quarter of the table)")
  report.say("   in the (status, id) index.")
  return { sizes: options.sizes, rounds: options.rounds, seconds: options.seconds, rows }
}
