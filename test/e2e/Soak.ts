/**
 * The soak: mixed creates and reads (gets, pages, inventories) over many keep-alive
 * connections against the real process, a `kill -9` in the middle of the load, a
 * restart on the same data, the rest of the load, and then the proof that every
 * acknowledged pet is present and identical, that nothing was stored twice or in part,
 * how far the process's resident memory went, and whether throughput held as the store
 * grew (it fell to 39% over 10 minutes while the inventory counted the table). `npm run soak` runs the full size (bench/soak.ts); a short
 * version runs in the tests (soak.test.ts).
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import { createDatabase, databaseUrl } from "./PgAdmin.ts"
import {
  initializedDataDir,
  isPet,
  listAll,
  type PetJson,
  type ServiceProcess,
  sleep,
  startService,
  STATUSES
} from "./ServiceProcess.ts"

export interface SoakOptions {
  readonly store: "embedded" | "postgres"
  /** Requests in all, creates and reads, across both runs of the service. */
  readonly operations: number
  /** Concurrent keep-alive connections, one client each. */
  readonly connections: number
  /** Share of the operations sent before the `kill -9` (default one half). */
  readonly killAfter?: number
}

export interface SoakReport {
  readonly store: SoakOptions["store"]
  readonly operations: number
  readonly connections: number
  readonly durationMs: number
  readonly creates: number
  readonly acknowledged: number
  readonly reads: number
  /** Creates in flight at the kill: the client never learnt whether they were stored. */
  readonly unknown: number
  /** Of those, how many the store kept. */
  readonly unknownStored: number
  readonly stored: number
  /** From the kill until the restarted service was ready. */
  readonly restartMs: number
  /** Resident memory of each run of the service under load (undefined off Linux). */
  readonly rss: readonly [RssSummary | undefined, RssSummary | undefined]
  /** Throughput and resident memory at the start, in the middle (just before the kill) and at the end. */
  readonly phases: ReadonlyArray<SoakPhase>
  /** Every broken expectation, described; empty when the soak passed. */
  readonly problems: ReadonlyArray<string>
}

const API_KEY = "soak-key"

interface NewPetJson {
  readonly name: string
  readonly categoryId: number
  readonly status?: (typeof STATUSES)[number]
}

interface Answer {
  readonly status: number
  readonly body: unknown
}

/** One request on a connection of `agent`; rejects on a transport error (the kill). */
const send = (service: ServiceProcess, agent: Http.Agent, method: string, path: string, body?: unknown) =>
  new Promise<Answer>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const request = Http.request({
      agent,
      host: "127.0.0.1",
      port: service.port,
      method,
      path,
      timeout: 30_000,
      headers: {
        authorization: `Bearer ${API_KEY}`,
        ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) })
      }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("error", reject)
      response.on("end", () => {
        if (!response.complete) return reject(new Error("incomplete response"))
        const text = Buffer.concat(chunks).toString("utf8")
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          return reject(new Error(`not JSON: ${text.slice(0, 100)}`))
        }
        resolve({ status: response.statusCode ?? 0, body: parsed })
      })
    })
    request.on("timeout", () => request.destroy(new Error("no answer within 30 s")))
    request.on("error", reject)
    request.end(payload)
  })

const rssMiB = (pid: number): number | undefined => {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) / 1024
  } catch {
    return undefined
  }
}

/** A tenth of the operations: how fast they completed, and the resident memory when they had. */
export interface SoakPhase {
  readonly name: "start" | "middle" | "end"
  /** Operation indexes [from, to). */
  readonly from: number
  readonly to: number
  readonly requestsPerSecond: number
  /** MiB, the last sample taken by the time the phase's last operation completed (undefined off Linux). */
  readonly rss: number | undefined
}

/** First, largest and last resident set size sampled, MiB. */
export interface RssSummary {
  readonly first: number
  readonly max: number
  readonly last: number
}

/**
 * Samples the process's resident set every 200 ms until `stop()`. The first second
 * is skipped: the embedded database's start peaks at about twice its working size
 * for a moment, which says nothing about how memory behaves under load.
 */
const sampleRss = (service: ServiceProcess, timeline: Array<{ readonly at: number; readonly mib: number }>) => {
  const samples: Array<number> = []
  const since = Date.now() + 1_000
  const timer = setInterval(() => {
    const rss = Date.now() < since ? undefined : rssMiB(service.pid)
    if (rss !== undefined) {
      samples.push(rss)
      timeline.push({ at: Date.now(), mib: rss })
    }
  }, 200)
  return {
    stop: (): RssSummary | undefined => {
      clearInterval(timer)
      return samples.length === 0
        ? undefined
        : { first: samples[0] as number, max: Math.max(...samples), last: samples.at(-1) as number }
    }
  }
}

const samePet = (a: PetJson, b: PetJson) => JSON.stringify(a) === JSON.stringify(b)

export const runSoak = async (options: SoakOptions): Promise<SoakReport> => {
  const env = options.store === "embedded"
    ? { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: await initializedDataDir(), LOG_LEVEL: "warn" }
    : { API_KEYS: API_KEY, STORE: "postgres", DATABASE_URL: databaseUrl(await createDatabase()), LOG_LEVEL: "warn" }
  const killAt = Math.floor(options.operations * (options.killAfter ?? 0.5))
  const problems: Array<string> = []
  const problem = (text: string) => {
    if (problems.length < 50) problems.push(text)
  }

  const sentPets = new Map<string, NewPetJson>()
  const acknowledged = new Map<number, PetJson>()
  const acknowledgedIds: Array<number> = []
  const unknown = new Set<string>()
  let creates = 0
  let reads = 0

  const started = Date.now()
  // When each operation completed (ms since the epoch), and every RSS sample, for the phases.
  const completedAt = new Float64Array(options.operations)
  const rssTimeline: Array<{ readonly at: number; readonly mib: number }> = []
  let service = await startService({ env, startTimeoutMs: 60_000 })
  let rss = sampleRss(service, rssTimeline)
  const rssSummaries: Array<RssSummary | undefined> = []
  let next = 0
  let killedAt = 0
  let readyAgainAt = 0
  // A request to a killed instance may fail; one to a live instance may not.
  const killed = new WeakSet<ServiceProcess>()
  // Settles once the service is back after the kill; workers wait on it.
  let restarted: Promise<void> | undefined

  const operation = async (agent: Http.Agent, i: number, target: ServiceProcess) => {
    const kind = i % 5
    if (kind <= 2) {
      const pet: NewPetJson = i % 4 === 3
        ? { name: `soak-${options.store}-${i}`, categoryId: 1 + (i % 50) }
        : { name: `soak-${options.store}-${i}`, categoryId: 1 + (i % 50), status: STATUSES[i % 3] as (typeof STATUSES)[number] }
      sentPets.set(pet.name, pet)
      creates++
      try {
        const answer = await send(target, agent, "POST", "/v1/pets", pet)
        if (answer.status !== 201 || !isPet(answer.body)) {
          return problem(`create ${pet.name}: ${answer.status} ${JSON.stringify(answer.body)}`)
        }
        const expected = { id: answer.body.id, ...pet, tags: [], version: 1 }
        if (!samePet(answer.body, expected)) problem(`create ${pet.name} answered ${JSON.stringify(answer.body)}`)
        acknowledged.set(answer.body.id, answer.body)
        acknowledgedIds.push(answer.body.id)
      } catch (error) {
        if (!killed.has(target)) problem(`create ${pet.name}: ${String(error)}`)
        unknown.add(pet.name)
      }
      return
    }
    reads++
    try {
      if (kind === 3 && acknowledgedIds.length > 0) {
        const id = acknowledgedIds[i % acknowledgedIds.length] as number
        const answer = await send(target, agent, "GET", `/v1/pets/${id}`)
        const known = acknowledged.get(id) as PetJson
        if (answer.status !== 200 || !isPet(answer.body) || !samePet(answer.body, known)) {
          problem(`get ${id}: ${answer.status} ${JSON.stringify(answer.body)}, acknowledged ${JSON.stringify(known)}`)
        }
        return
      }
      if (i % 10 === 9) {
        // Between what was acknowledged before asking and everything sent by the answer.
        const floor = acknowledged.size
        const answer = await send(target, agent, "GET", "/v1/store/inventory")
        const counts = answer.body as Record<string, unknown>
        const total = ["available", "pending", "sold", "none"].reduce((sum, key) => sum + Number(counts[key]), 0)
        if (answer.status !== 200 || !(total >= floor && total <= creates)) {
          problem(`inventory: ${answer.status} ${JSON.stringify(answer.body)} with ${floor} acknowledged, ${creates} sent`)
        }
        return
      }
      const status = STATUSES[i % 3] as string
      const answer = await send(target, agent, "GET", i % 2 === 0 ? `/v1/pets?limit=20&status=${status}` : "/v1/pets?limit=20")
      if (answer.status !== 200 || !Array.isArray(answer.body)) {
        return problem(`list: ${answer.status} ${JSON.stringify(answer.body)}`)
      }
      for (const item of answer.body) {
        const known = isPet(item) ? acknowledged.get(item.id) : undefined
        if (!isPet(item) || (known !== undefined && !samePet(item, known))) problem(`list item ${JSON.stringify(item)}`)
      }
    } catch (error) {
      if (!killed.has(target)) problem(`read: ${String(error)}`)
    }
  }

  const worker = async () => {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      while (next < options.operations) {
        if (restarted !== undefined) await restarted
        const i = next++
        if (i === killAt) {
          // Mid-load: the other connections have requests in flight.
          killedAt = Date.now()
          rssSummaries.push(rss.stop())
          killed.add(service)
          restarted = (async () => {
            await service.kill9()
            service = await startService({ env, startTimeoutMs: 60_000 })
            readyAgainAt = Date.now()
            rss = sampleRss(service, rssTimeline)
          })()
          await restarted
        }
        await operation(agent, i, service)
        completedAt[i] = Date.now()
      }
    } finally {
      agent.destroy()
    }
  }
  await Promise.all(Array.from({ length: options.connections }, worker))
  await restarted
  const restartMs = readyAgainAt - killedAt
  await sleep(200)
  rssSummaries.push(rss.stop())

  // Everything acknowledged is there and identical; nothing is there twice or in part.
  const { pets } = await listAll(service, API_KEY, { limit: 100 })
  const byId = new Map<number, PetJson>()
  const names = new Map<string, number>()
  for (const pet of pets) {
    if (byId.has(pet.id)) problem(`id ${pet.id} listed twice`)
    byId.set(pet.id, pet)
    names.set(pet.name, (names.get(pet.name) ?? 0) + 1)
    const sent = sentPets.get(pet.name)
    if (sent === undefined) problem(`stored pet nobody sent: ${JSON.stringify(pet)}`)
    else if (!samePet(pet, { id: pet.id, ...sent, tags: [], version: 1 })) problem(`stored ${JSON.stringify(pet)}, sent ${JSON.stringify(sent)}`)
  }
  for (const [name, count] of names) if (count > 1) problem(`${name} stored ${count} times`)
  for (const [id, pet] of acknowledged) {
    const stored = byId.get(id)
    if (stored === undefined || !samePet(stored, pet)) problem(`acknowledged ${JSON.stringify(pet)}, stored ${JSON.stringify(stored)}`)
  }
  const unknownStored = [...unknown].filter((name) => names.has(name)).length
  if (pets.length !== acknowledged.size + unknownStored) {
    problem(`${pets.length} stored, but ${acknowledged.size} acknowledged + ${unknownStored} of unknown fate`)
  }

  const exit = await service.stop()
  if (exit.code !== 0) problem(`the restarted service exited with ${JSON.stringify(exit)}`)
  const tenth = Math.max(2, Math.floor(options.operations / 10))
  const phase = (name: SoakPhase["name"], from: number, to: number): SoakPhase => {
    const times = Array.from(completedAt.subarray(from, to)).sort((a, b) => a - b)
    const last = times.at(-1) as number
    return {
      name,
      from,
      to,
      requestsPerSecond: ((times.length - 1) * 1000) / Math.max(1, last - (times[0] as number)),
      rss: rssTimeline.findLast((sample) => sample.at <= last)?.mib
    }
  }
  return {
    store: options.store,
    operations: options.operations,
    connections: options.connections,
    durationMs: Date.now() - started,
    creates,
    acknowledged: acknowledged.size,
    reads,
    unknown: unknown.size,
    unknownStored,
    stored: pets.length,
    restartMs,
    rss: [rssSummaries[0], rssSummaries[1]],
    phases: [
      phase("start", 0, tenth),
      phase("middle", Math.max(0, killAt - tenth), killAt),
      phase("end", options.operations - tenth, options.operations)
    ],
    problems
  }
}

/** One line for a report. */
export const describeSoak = (report: SoakReport): string => {
  const mib = (rss: RssSummary | undefined) =>
    rss === undefined ? "n/a" : `${rss.first.toFixed(0)} → max ${rss.max.toFixed(0)} → ${rss.last.toFixed(0)} MiB`
  return `[soak ${report.store}] ${report.operations} operations over ${report.connections} connections in ` +
    `${(report.durationMs / 1000).toFixed(1)} s: ${report.creates} creates (${report.acknowledged} acknowledged, ` +
    `${report.unknown} in flight at the kill -9, ${report.unknownStored} of those stored), ${report.reads} reads; ` +
    `back ${report.restartMs} ms after the kill; ${report.stored} stored; RSS ${mib(report.rss[0])} before ` +
    `the kill, ${mib(report.rss[1])} after; ${report.problems.length === 0 ? "no problem" : `${report.problems.length} problems`}; ` +
    report.phases.map((phase) =>
      `${phase.name} (operations ${phase.from}-${phase.to}) ${phase.requestsPerSecond.toFixed(0)} req/s, RSS ${
        phase.rss === undefined ? "n/a" : `${phase.rss.toFixed(0)} MiB`
      }`
    ).join("; ")
}
