/**
 * The side-by-side HTTP section: Animal Store in each store mode, the bare node:http
 * reference (the ceiling), Fastify peers (bare, and with Animal Store's features: the
 * fair peer) and Effect floor peers (Effect's HTTP platform with the reference's request
 * rules) on the same storage (a Map; PostgreSQL through node-postgres and through
 * @effect/sql-pg, Animal Store's driver), each its own process,
 * loaded by autocannon from another process. Scenarios run interleaved (every server
 * runs a scenario before the next scenario starts, in a rotating order) and repeat for
 * several passes, so the shared machine's noise lands on all of them alike; ratios are
 * taken within a pass, then the median over passes is reported.
 */
import { mkdtempSync } from "node:fs"
import { join } from "node:path"
import type { CannonArgs, CannonResult } from "./cannon.ts"
import { type LoadGenerator, startLoadGenerator } from "./cannon-client.ts"
import { type HttpRun, LABELS, reportHttp, type TargetKey } from "./http-results.ts"
import { cpuMillisOf, fmt, peakRssBytes, postgresCpuMillis, resetPeakRss, stopChild, waitExit } from "./lib.ts"
import { createDatabase, dropDatabase, seedPets } from "./pg-admin.ts"
import type { Report } from "./report.ts"
import { MEASURED, SCENARIOS, type ScenarioName } from "./scenarios.ts"
import { seedByPost } from "./seed.ts"
import {
  diagnostics,
  httpStatus,
  logLines,
  type Server,
  startEffect,
  startFastify,
  startFastifyFeatures,
  startReference,
  startService
} from "./servers.ts"
import { measureStartup, type StartupCase } from "./startup.ts"

export interface HttpOptions {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  /** Admin URL of the local PostgreSQL server, or undefined to leave out the PostgreSQL servers. */
  readonly pgUrl: string | undefined
  readonly passes: number
  readonly seconds: number
  /** Before each measured run. */
  readonly warmupSeconds: number
  /** Once per scenario and server before the first pass. */
  readonly warmupPassSeconds: number
  readonly startupSamples: number
}

const CONNECTIONS = 50
const SEED_PETS = 10_000

interface Target {
  readonly key: TargetKey
  readonly server: Server
  readonly idMin: number
  readonly idMax: number
  /** How the pets got there, and how long it took. */
  readonly seeding: { readonly how: string; readonly millis: number }
  /** The database of a server on this machine's PostgreSQL server. */
  readonly database?: string
  /** Requests sent to it so far, seeding and warm-up included (for log lines per request). */
  sent: number
}

const badOf = (scenario: ScenarioName, result: CannonResult): { readonly bad: number; readonly detail: string } => {
  const ok = SCENARIOS[scenario].ok
  const parts: Array<string> = []
  let bad = result.errors
  for (const [status, count] of Object.entries(result.statuses)) {
    if (!ok.includes(Number(status))) {
      bad += count
      parts.push(`${status}:${count}`)
    }
  }
  if (result.errors > 0) parts.push(`errors:${result.errors}`)
  return { bad, detail: parts.join(" ") }
}

const exited = (server: Server): boolean => server.child.exitCode !== null || server.child.signalCode !== null

/** Sanity check that a server really serves the seeded data the way the service does. */
const checkServes = async (target: Target, apiKey: string): Promise<Array<string>> => {
  const problems: Array<string> = []
  const headers = { authorization: `Bearer ${apiKey}` }
  const base = `http://127.0.0.1:${target.server.port}`
  const page = await fetch(`${base}/v1/pets?limit=20`, { headers })
  const pets = (await page.json()) as Array<{ readonly id: number; readonly status?: string }>
  if (pets.length !== 20) problems.push(`list returned ${pets.length} pets`)
  const next = /<([^>]+)>; rel="next"/.exec(page.headers.get("link") ?? "")?.[1]
  if (next === undefined) problems.push("list has no next link")
  else {
    const second = (await (await fetch(`${base}${next}`, { headers })).json()) as Array<{ readonly id: number }>
    if (second.length !== 20 || second[0]!.id <= pets[pets.length - 1]!.id) problems.push("the next link does not continue the list")
  }
  const sold = (await (await fetch(`${base}/v1/pets?status=sold&limit=20`, { headers })).json()) as Array<{ readonly status?: string }>
  if (sold.length !== 20 || sold.some((pet) => pet.status !== "sold")) problems.push("status=sold did not return 20 sold pets")
  for (const [id, expected] of [[target.idMin, 200], [target.idMax, 200], [target.idMax + 1, 404]] as const) {
    const status = await httpStatus(target.server.port, `/v1/pets/${id}`, headers)
    if (status !== expected) problems.push(`GET /v1/pets/${id} answered ${status}, expected ${expected}`)
  }
  return problems
}

export const httpSection = async (options: HttpOptions): Promise<Record<string, unknown>> => {
  const { report, work, apiKey } = options
  report.heading(
    `HTTP side by side (${CONNECTIONS} connections, ${options.passes} passes x (${options.warmupSeconds} s warm-up + ` +
      `${options.seconds} s) per scenario and server, after a ${options.warmupPassSeconds} s warm-up of each)`
  )
  report.say("   Every server is its own process holding 10,000 pets; autocannon runs in another process on the same")
  report.say("   2 shared cores. Servers take turns within each scenario and pass, in a rotating order.")

  const databases: Array<string> = []
  const loader: LoadGenerator = startLoadGenerator()
  const targets: Array<Target> = []
  try {
    // -- start and seed ------------------------------------------------------------------
    const dataDir = mkdtempSync(join(work, "http-embedded-"))
    const seedOverHttp = async (key: TargetKey, server: Server): Promise<Target> => {
      const seeded = await seedByPost(server.port, apiKey, SEED_PETS)
      if (seeded.count !== SEED_PETS || seeded.idMax - seeded.idMin + 1 !== SEED_PETS) {
        throw new Error(`seeding by POST stored ${seeded.count} pets with ids ${seeded.idMin}..${seeded.idMax}`)
      }
      if (seeded.retried503 > 0) {
        report.note(`${LABELS[key]} answered 503 to ${seeded.retried503} of ${SEED_PETS} seeding POSTs (32 at a time); retried`)
      }
      return {
        key,
        server,
        idMin: seeded.idMin,
        idMax: seeded.idMax,
        seeding: { how: "POST x32", millis: seeded.millis },
        sent: SEED_PETS + seeded.retried503
      }
    }
    const seedBySql = async (key: TargetKey, server: Server, url: string): Promise<Target> => {
      const started = performance.now()
      const range = await seedPets(url, SEED_PETS)
      const database = decodeURIComponent(new URL(url).pathname.slice(1))
      return { key, server, ...range, seeding: { how: "SQL", millis: performance.now() - started }, sent: 0, database }
    }
    const database = async (label: string) => {
      if (options.pgUrl === undefined) throw new Error("no usable PostgreSQL server (BENCH_PG_URL)")
      const db = await createDatabase(options.pgUrl, label)
      databases.push(db.name)
      return db
    }
    // A server that fails to seed or answer correctly is left out, not the section.
    const setUp = async (key: TargetKey, start: () => Promise<Target>): Promise<Target | undefined> => {
      let target: Target | undefined
      try {
        const started = performance.now()
        target = await start()
        const took = performance.now() - started
        const problems = await checkServes(target, apiKey)
        if (problems.length > 0) throw new Error(`does not serve the seeded pets: ${problems.join("; ")}`)
        targets.push(target)
        const seconds = (millis: number) => `${fmt(millis / 1000, 2)} s`
        report.say(
          `   ${LABELS[key]}: serving ${seconds(took - target.seeding.millis)} after spawn, ` +
            `${SEED_PETS.toLocaleString("en-US")} pets by ${target.seeding.how} in ${seconds(target.seeding.millis)}`
        )
        return target
      } catch (error) {
        report.note(`${LABELS[key]} left out: ${error instanceof Error ? error.message : String(error)}`)
        if (target !== undefined) {
          await stopChild(target.server.child)
          report.note(`${LABELS[key]} said: ${diagnostics(target.server)}`)
        }
        return undefined
      }
    }

    report.say("   starting and seeding: POST for memory, embedded, reference and the Map peers; SQL generate_series")
    report.say("   for the PostgreSQL servers.")
    await setUp("as-memory", async () =>
      seedOverHttp("as-memory", await startService({ name: "as-memory", work, apiKey, env: { STORE: "memory" } })))
    const embedded = await setUp("as-embedded", async () =>
      seedOverHttp(
        "as-embedded",
        await startService({ name: "as-embedded", work, apiKey, env: { STORE: "embedded", DATA_DIR: dataDir } })
      ))
    let asDatabaseUrl: string | undefined
    await setUp("as-postgres", async () => {
      const db = await database("as")
      const server = await startService({ name: "as-postgres", work, apiKey, env: { STORE: "postgres", DATABASE_URL: db.url } })
      const target = await seedBySql("as-postgres", server, db.url)
      asDatabaseUrl = db.url
      return target
    })
    await setUp("reference", async () => seedOverHttp("reference", await startReference(apiKey)))
    await setUp("fastify-map", async () => seedOverHttp("fastify-map", await startFastify({ name: "fastify-map", apiKey, store: "map" })))
    await setUp("fastify-pg", async () => {
      const db = await database("fastify")
      return seedBySql("fastify-pg", await startFastify({ name: "fastify-pg", apiKey, store: "pg", databaseUrl: db.url }), db.url)
    })
    await setUp("fastify-features-map", async () =>
      seedOverHttp(
        "fastify-features-map",
        await startFastifyFeatures({ name: "fastify-features-map", work, apiKey, store: "map" })
      ))
    await setUp("fastify-features-pg", async () => {
      const db = await database("fastify_features")
      return seedBySql(
        "fastify-features-pg",
        await startFastifyFeatures({ name: "fastify-features-pg", work, apiKey, store: "pg", databaseUrl: db.url }),
        db.url
      )
    })
    await setUp("effect-map", async () => seedOverHttp("effect-map", await startEffect({ name: "effect-map", apiKey, store: "map" })))
    await setUp("effect-pg", async () => {
      const db = await database("effect")
      return seedBySql("effect-pg", await startEffect({ name: "effect-pg", apiKey, store: "pg", databaseUrl: db.url }), db.url)
    })
    await setUp("effect-sqlpg", async () => {
      const db = await database("effect_sqlpg")
      return seedBySql(
        "effect-sqlpg",
        await startEffect({ name: "effect-sqlpg", apiKey, store: "sqlpg", databaseUrl: db.url }),
        db.url
      )
    })

    // -- measure -------------------------------------------------------------------------
    const runs: Array<HttpRun> = []
    const dead = new Set<TargetKey>()
    let rssResettable = true
    const measure = async (pass: number, scenario: ScenarioName, target: Target, seed: number): Promise<HttpRun> => {
      const args: CannonArgs = {
        port: target.server.port,
        scenario,
        connections: CONNECTIONS,
        seconds: options.warmupSeconds,
        apiKey,
        idMin: target.idMin,
        idMax: target.idMax,
        seed: seed + 7_919
      }
      const pid = target.server.child.pid
      const warm = await loader.run(args)
      rssResettable = resetPeakRss(pid) && rssResettable
      const databaseBefore = target.database === undefined ? undefined : postgresCpuMillis(target.database)
      const cpuBefore = cpuMillisOf(pid)
      const result = await loader.run({ ...args, seconds: options.seconds, seed })
      const cpuAfter = cpuMillisOf(pid)
      const databaseAfter = target.database === undefined ? undefined : postgresCpuMillis(target.database)
      target.sent += warm.sent + result.sent
      const { bad, detail } = badOf(scenario, result)
      return {
        pass,
        scenario,
        target: target.key,
        rps: result.rps,
        p50: result.latencyMs.p50,
        p99: result.latencyMs.p99,
        requests: result.requests,
        peakRssBytes: peakRssBytes(pid),
        serverCpuUsPerRequest: cpuBefore === undefined || cpuAfter === undefined || result.requests === 0
          ? undefined
          : ((cpuAfter - cpuBefore) * 1000) / result.requests,
        databaseCpuUsPerRequest: databaseBefore === undefined || databaseAfter === undefined || result.requests === 0
          ? undefined
          : ((databaseAfter - databaseBefore) * 1000) / result.requests,
        clientCpuPercent: (100 * result.clientCpuMs) / (result.seconds * 1000),
        bad,
        badDetail: detail
      }
    }

    // The servers seeded in SQL have answered nothing yet, and Animal Store's first few
    // thousand answers cost two to three times the CPU of later ones (JIT): every server
    // runs every scenario once before anything is recorded.
    process.stdout.write(`   warm-up (not recorded, ${options.warmupPassSeconds} s per scenario and server)`)
    for (const target of targets) {
      for (const scenario of MEASURED) {
        const warm = await loader.run({
          port: target.server.port,
          scenario,
          connections: CONNECTIONS,
          seconds: options.warmupPassSeconds,
          apiKey,
          idMin: target.idMin,
          idMax: target.idMax,
          seed: 0
        })
        target.sent += warm.sent
      }
      process.stdout.write(` ${target.key}`)
    }
    process.stdout.write("\n")

    for (let pass = 0; pass < options.passes; pass++) {
      for (const [index, scenario] of MEASURED.entries()) {
        const shift = (pass + index) % targets.length
        const order = [...targets.slice(shift), ...targets.slice(0, shift)]
        process.stdout.write(`   pass ${pass + 1}/${options.passes} ${SCENARIOS[scenario].label}:`)
        for (const target of order) {
          if (dead.has(target.key)) continue
          const run = await measure(pass, scenario, target, 1 + pass * 100 + index)
          // A run against a server that died meanwhile measured connection errors, not the server.
          if (exited(target.server)) {
            dead.add(target.key)
            const { exitCode, signalCode } = target.server.child
            report.note(
              `${LABELS[target.key]} exited (${exitCode ?? signalCode}) during or right after pass ${pass + 1} ` +
                `${SCENARIOS[scenario].label}; left out from there: ${diagnostics(target.server)}`
            )
            continue
          }
          runs.push(run)
          process.stdout.write(` ${target.key} ${fmt(run.rps)}`)
        }
        process.stdout.write("\n")
      }
    }
    if (!rssResettable) report.note("peak RSS could not be reset per run (/proc/<pid>/clear_refs): figures are lifetime peaks")

    // -- report --------------------------------------------------------------------------
    const results = reportHttp(report, runs, targets.map((target) => target.key), options.passes)

    const logs = targets.filter((target) => target.server.logPath !== undefined).map((target) =>
      `${LABELS[target.key]} ${fmt(logLines(target.server) / Math.max(1, target.sent), 2)}`
    )
    report.say(`   request log lines written per request (default log level, stdout to a file): ${logs.join(", ")};`)
    report.say("   the reference, bare Fastify (Fastify's default: logger off) and the Effect floor write none.")

    // -- stop, then start-up times on the data just written --------------------------------
    for (const target of targets) {
      await stopChild(target.server.child)
      const code = await waitExit(target.server.child)
      if (code !== 0) report.note(`${LABELS[target.key]} exited with ${code} on SIGTERM: ${diagnostics(target.server)}`)
    }
    await loader.stop()

    const postgresUrl = asDatabaseUrl
    const cases: Array<StartupCase> = [
      { mode: "memory", data: "(none kept)", env: () => ({ STORE: "memory" }) },
      ...(embedded === undefined ? [] : [{
        mode: "embedded",
        data: `existing data dir (${SEED_PETS}+ pets)`,
        env: () => ({ STORE: "embedded", DATA_DIR: dataDir })
      }]),
      {
        mode: "embedded",
        data: "empty data dir",
        env: (sample) => ({ STORE: "embedded", DATA_DIR: join(work, `startup-empty-${sample}`) })
      },
      ...(postgresUrl === undefined ? [] : [{
        mode: "postgres",
        data: `existing database (${SEED_PETS}+ pets)`,
        env: () => ({ STORE: "postgres", DATABASE_URL: postgresUrl })
      }])
    ]
    report.say("")
    report.say(`   Start-up: spawn of node build/main.js (what npm start runs) to the first 200 on GET /v1/pets (${options.startupSamples} sample${options.startupSamples === 1 ? "" : "s"} each)`)
    const startup = await measureStartup({ work, apiKey, samples: options.startupSamples, cases })
    report.table(
      ["store", "data", "spawn to first 200 ms (median)", "samples ms", "problems"],
      startup.map((row) => [
        row.mode,
        row.data,
        fmt(row.medianMs),
        row.samplesMs.map((ms) => fmt(ms)).join(" "),
        row.problems.join("; ")
      ])
    )

    return {
      connections: CONNECTIONS,
      passes: options.passes,
      seconds: options.seconds,
      warmupSeconds: options.warmupSeconds,
      seededPets: SEED_PETS,
      servers: Object.fromEntries(targets.map((target) => [target.key, LABELS[target.key]])),
      ...results,
      runs,
      startup
    }
  } finally {
    await loader.stop()
    for (const target of targets) await stopChild(target.server.child)
    if (options.pgUrl !== undefined) for (const name of databases) await dropDatabase(options.pgUrl, name)
  }
}
