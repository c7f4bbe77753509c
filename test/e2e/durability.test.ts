/**
 * Durability of the real process: every pet the service acknowledged with a 201
 * is still there, identical, after `kill -9` and a restart on the same
 * DATA_DIR (embedded) or the same database (postgres).
 */
import { describe, expect, it } from "vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { createDatabase, databaseUrl, postgresAvailable } from "./PgAdmin.ts"
import { createPet, listAll, mapConcurrent, newPet, type PetJson, type ServiceProcess, startService, STATUSES, tempDir } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"

const API_KEY = "durability-test-key"

cleanUpProcesses()

const byId = (a: PetJson, b: PetJson) => a.id - b.id

/** Every acknowledged pet reads back identically, by id and through every listing. */
const expectAllPresent = async (service: ServiceProcess, acknowledged: ReadonlyArray<PetJson>) => {
  const read = await mapConcurrent(acknowledged, 16, async (pet) => {
    const result = await service.request("GET", `/v1/pets/${pet.id}`, { apiKey: API_KEY })
    return { status: result.status, body: result.json }
  })
  const mismatches = read.flatMap((result, i) =>
    result.status === 200 && JSON.stringify(result.body) === JSON.stringify(acknowledged[i])
      ? []
      : [{ expected: acknowledged[i], got: result }]
  )
  expect(mismatches).toEqual([])

  const expected = [...acknowledged].sort(byId)
  const { pets, pages } = await listAll(service, API_KEY, { limit: 37 })
  // The next-page link is only given when another pet exists: no empty trailing page.
  expect(pages).toBe(Math.max(1, Math.ceil(expected.length / 37)))
  expect(pets).toEqual(expected)
  expect((await listAll(service, API_KEY)).pets).toEqual(expected)
  for (const status of STATUSES) {
    const filtered = await listAll(service, API_KEY, { status, limit: 100 })
    expect(filtered.pets).toEqual(expected.filter((pet) => pet.status === status))
  }
}

interface Scenario {
  /** Settings pointing the service at the store under test. */
  readonly env: () => Promise<{ readonly DATA_DIR?: string } & Record<string, string>>
  readonly firstStartTimeoutMs: number
}

const scenario = (name: string, setup: Scenario) => {
  it(`${name}: 200 acknowledged pets survive kill -9 and a restart, identical, by id and by page; so do those acknowledged during a burst cut by kill -9`, async () => {
    const env = { API_KEYS: API_KEY, ...(await setup.env()) }
    const first = await startService({ env, startTimeoutMs: setup.firstStartTimeoutMs })
    // The embedded store's DATA_DIR lock names the owner; SIGKILL leaves it behind for the next start to take over.
    const lockFile = env.DATA_DIR === undefined ? undefined : Path.join(env.DATA_DIR, "animal-store.pid")
    const lockOwner = () => lockFile === undefined ? undefined : Fs.readFileSync(lockFile, "utf8").split(" ")[0]?.trim()
    if (lockFile !== undefined) expect(lockOwner()).toBe(String(first.pid))

    // 60 one after another, then 140 with 20 in flight at a time.
    const acknowledged: Array<PetJson> = []
    for (let i = 0; i < 60; i++) acknowledged.push(await createPet(first, API_KEY, newPet(i, "seq")))
    acknowledged.push(
      ...await mapConcurrent(Array.from({ length: 140 }, (_, i) => i), 20, (i) => createPet(first, API_KEY, newPet(i, "conc")))
    )
    expect(new Set(acknowledged.map((pet) => pet.id)).size).toBe(200)

    // No grace period: the kill follows the last acknowledgement at once.
    expect(await first.kill9()).toEqual({ code: null, signal: "SIGKILL" })
    if (lockFile !== undefined) expect(lockOwner()).toBe(String(first.pid))

    const restartedAt = Date.now()
    const second = await startService({ env, startTimeoutMs: 30_000 })
    const restartMs = Date.now() - restartedAt
    if (lockFile !== undefined) expect(lockOwner()).toBe(String(second.pid))
    await expectAllPresent(second, acknowledged)

    // Killed in the middle of a burst: whatever was acknowledged is there, the rest is
    // either wholly there or wholly absent, and nothing appears twice.
    const inFlight = Array.from({ length: 120 }, (_, i) => i)
    const burstAcknowledged: Array<PetJson> = []
    let killed: Promise<unknown> | undefined
    await mapConcurrent(inFlight, 24, async (i) => {
      try {
        const pet = await createPet(second, API_KEY, newPet(i, "burst"))
        burstAcknowledged.push(pet)
        if (burstAcknowledged.length === 40) killed = second.kill9()
      } catch {
        // refused or cut off by the kill: not acknowledged
      }
    })
    await killed
    expect(burstAcknowledged.length).toBeGreaterThanOrEqual(40)

    const third = await startService({ env, startTimeoutMs: 30_000 })
    const { pets } = await listAll(third, API_KEY, { limit: 100 })
    expect(new Set(pets.map((pet) => pet.id)).size).toBe(pets.length)
    const listed = new Map(pets.map((pet) => [pet.id, pet]))
    for (const pet of [...acknowledged, ...burstAcknowledged]) expect(listed.get(pet.id)).toEqual(pet)
    const known = new Set([...acknowledged, ...burstAcknowledged].map((pet) => pet.id))
    for (const pet of pets.filter((pet) => !known.has(pet.id))) expect(pet.name).toMatch(/^burst-\d+ /)

    // Ids are never handed out twice, even across crashes.
    const after = await createPet(third, API_KEY, newPet(0, "after"))
    expect(after.id).toBeGreaterThan(Math.max(...pets.map((pet) => pet.id)))
    expect(await third.stop()).toEqual({ code: 0, signal: null })
    if (lockFile !== undefined) expect(Fs.existsSync(lockFile)).toBe(false)

    console.info(
      `[durability ${name}] first start ${first.listeningAfterMs} ms, restart after kill -9 ${restartMs} ms ` +
        `(listening after ${second.listeningAfterMs} ms), burst: ${burstAcknowledged.length} acknowledged, ` +
        `${pets.length - acknowledged.length - burstAcknowledged.length} unacknowledged but stored`
    )
  }, 120_000)
}

describe("embedded store", () => {
  scenario("embedded", {
    env: async () => ({ STORE: "embedded", DATA_DIR: Path.join(tempDir(), "data") }),
    // The first open of an empty DATA_DIR runs initdb.
    firstStartTimeoutMs: 60_000
  })
})

describe.skipIf(!postgresAvailable)("postgres store", () => {
  scenario("postgres", {
    env: async () => ({ STORE: "postgres", DATABASE_URL: databaseUrl(await createDatabase()) }),
    firstStartTimeoutMs: 30_000
  })
})
