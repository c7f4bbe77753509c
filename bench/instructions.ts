/**
 * Instructions per request, counted by valgrind's callgrind. Requests per second and CPU
 * time on two shared cores moved by a factor of two between runs of the same code; an
 * instruction count moves by about 5% (the Effect floor's by up to 15%), whatever else the
 * machine does. So it shows what each server's own code costs per request, and changes
 * that runs over HTTP cannot resolve.
 *
 * Each server runs under callgrind with counting off. After seeding and a warm-up,
 * counting is switched on (`callgrind_control -i on`) for a fixed number of requests of
 * one scenario and off again, and the count is read from callgrind's dump. Every thread
 * of the process is counted (V8's compiler and GC helpers too). Servers: Animal Store on
 * memory (as `npm start` runs it), the Effect floor on a Map, Fastify on a Map and the
 * bare node:http reference.
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { startLoadGenerator } from "./cannon-client.ts"
import { fmt, fmtRatio, HOST, sleep, stopChild } from "./lib.ts"
import type { Report } from "./report.ts"
import type { ScenarioName } from "./scenarios.ts"
import { seedByPost } from "./seed.ts"
import { type Server, startEffect, startFastify, startReference, startService, type Wrapper } from "./servers.ts"

export interface InstructionsOptions {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  readonly scenarios: ReadonlyArray<ScenarioName>
  /** Requests counted per scenario and server. */
  readonly requests: number
  /** Requests sent before counting, per scenario and server. */
  readonly warmupRequests: number
}

const PETS = 1_000
const CONNECTIONS = 10
/** Under valgrind a server starts and answers some 20-50 times slower. */
const START_TIMEOUT_MS = 300_000

const hasCommand = (command: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

type Kind = "animal-store" | "effect-floor" | "fastify" | "reference"

const SERVERS: ReadonlyArray<{ readonly kind: Kind; readonly label: string }> = [
  { kind: "animal-store", label: "Animal Store memory" },
  { kind: "effect-floor", label: "Effect floor + Map" },
  { kind: "fastify", label: "Fastify + Map" },
  { kind: "reference", label: "reference node:http" }
]

const start = (kind: Kind, options: InstructionsOptions, wrapper: Wrapper): Promise<Server> => {
  const { apiKey } = options
  switch (kind) {
    case "animal-store":
      return startService({
        name: "instructions-memory",
        work: options.work,
        apiKey,
        env: { STORE: "memory" },
        wrapper,
        timeoutMs: START_TIMEOUT_MS
      })
    case "effect-floor":
      return startEffect({ name: "Effect floor + Map", apiKey, store: "map", wrapper, timeoutMs: START_TIMEOUT_MS })
    case "fastify":
      return startFastify({ name: "Fastify + Map", apiKey, store: "map", wrapper, timeoutMs: START_TIMEOUT_MS })
    case "reference":
      return startReference(apiKey, wrapper, START_TIMEOUT_MS)
  }
}

/**
 * Callgrind's finished dumps of one server: the file named at start-up stays empty until
 * the process exits, and each `callgrind_control -d` adds one; a dump's last line is `totals:`.
 */
const dumpsOf = (directory: string, prefix: string): ReadonlyArray<string> =>
  readdirSync(directory)
    .filter((name) => name.startsWith(prefix))
    .map((name) => readFileSync(join(directory, name), "utf8"))
    .filter((text) => /^totals: \d+$/m.test(text))

/** The instructions callgrind counted while counting was on, over all its dumps of this run. */
const countedInstructions = (directory: string, prefix: string): number => {
  let total = 0
  for (const text of dumpsOf(directory, prefix)) {
    for (const match of text.matchAll(/^totals: (\d+)$/gm)) total += Number(match[1])
  }
  return total
}

/**
 * Valgrind names the pipes callgrind_control talks through after $HOST, which is also
 * Animal Store's listen address: every server here runs with HOST set to that, and so
 * does callgrind_control.
 */
const callgrindControl = (args: ReadonlyArray<string>) =>
  execFileSync("callgrind_control", args, { stdio: "ignore", env: { ...process.env, HOST } })

/** Asks callgrind for a dump and waits until it is written (a few hundred milliseconds). */
const dump = async (server: Server, directory: string, prefix: string): Promise<void> => {
  const before = dumpsOf(directory, prefix).length
  callgrindControl(["-d", String(server.child.pid)])
  for (let waited = 0; dumpsOf(directory, prefix).length === before; waited += 100) {
    if (waited > 60_000) throw new Error(`callgrind wrote no dump for ${prefix} within 60 s`)
    await sleep(100)
  }
}

export const instructionsSection = async (options: InstructionsOptions): Promise<Record<string, unknown>> => {
  const { report } = options
  report.heading(
    `Instructions per request (valgrind callgrind; ${options.requests.toLocaleString("en-US")} requests counted per scenario and server, after ${options.warmupRequests.toLocaleString("en-US")} not counted; ${CONNECTIONS} connections, ${PETS.toLocaleString("en-US")} pets)`
  )
  const missing = ["valgrind", "callgrind_control"].filter((command) => !hasCommand(command))
  if (missing.length > 0) {
    report.note(`instructions: left out: ${missing.join(" and ")} not found (Debian package valgrind)`)
    return { skipped: `${missing.join(", ")} not found` }
  }
  const counts: Record<string, Record<string, number>> = {}
  const loader = startLoadGenerator()
  try {
    for (const { kind, label } of SERVERS) {
      const prefix = `callgrind-${kind}`
      const wrapper = [
        "env",
        `HOST=${HOST}`,
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        `--callgrind-out-file=${join(options.work, prefix)}.%p`
      ]
      const started = performance.now()
      const server = await start(kind, options, wrapper)
      try {
        const seeded = await seedByPost(server.port, options.apiKey, PETS)
        if (seeded.count !== PETS) throw new Error(`${label}: seeding stored ${seeded.count} pets`)
        report.say(`   ${label}: serving and seeded under valgrind in ${fmt((performance.now() - started) / 1000)} s`)
        const pid = String(server.child.pid)
        const load = (scenario: ScenarioName, amount: number) =>
          loader.run({
            port: server.port,
            scenario,
            connections: CONNECTIONS,
            seconds: 600,
            amount,
            apiKey: options.apiKey,
            idMin: seeded.idMin,
            idMax: seeded.idMax,
            seed: 1
          })
        counts[label] = {}
        for (const scenario of options.scenarios) {
          await load(scenario, options.warmupRequests)
          const before = countedInstructions(options.work, prefix)
          callgrindControl(["-i", "on", pid])
          const result = await load(scenario, options.requests)
          callgrindControl(["-i", "off", pid])
          await dump(server, options.work, prefix)
          const bad = result.requests - Object.entries(result.statuses)
            .filter(([status]) => status.startsWith("2"))
            .reduce((sum, [, n]) => sum + n, 0)
          if (bad > 0) report.note(`instructions: ${label} ${scenario}: ${bad} answers were not 2xx`)
          counts[label][scenario] = (countedInstructions(options.work, prefix) - before) / result.requests
        }
      } finally {
        await stopChild(server.child, 30_000)
      }
    }
  } finally {
    await loader.stop()
  }
  const floor = counts["Effect floor + Map"]
  const fastify = counts["Fastify + Map"]
  report.table(
    ["scenario", "server", "instructions/req", "vs Effect floor", "vs Fastify + Map"],
    options.scenarios.flatMap((scenario) =>
      SERVERS.map(({ label }) => {
        const count = counts[label]?.[scenario]
        return [
          scenario,
          label,
          count === undefined ? "-" : Math.round(count).toLocaleString("en-US"),
          fmtRatio(count === undefined || floor?.[scenario] === undefined ? undefined : count / floor[scenario]),
          fmtRatio(count === undefined || fastify?.[scenario] === undefined ? undefined : count / fastify[scenario])
        ]
      })
    )
  )
  report.say(
    "   Ratios above 1x: the server executes more instructions per request. Counts repeated within about 5% from run to run (the Effect floor's within 15%);"
  )
  report.say("   they leave out time spent waiting (the kernel's socket work is not counted either).")
  return { perRequest: counts, requests: options.requests, warmupRequests: options.warmupRequests }
}
