/**
 * The real process on the embedded store (the default): graceful shutdown on
 * SIGTERM/SIGINT, the single-writer lock on DATA_DIR, and concurrent requests.
 * One file, so the initialized DATA_DIR these tests copy is made (initdb) once.
 *
 * - SIGTERM and SIGINT end the process with exit code 0, releasing the DATA_DIR;
 *   requests in flight at that moment either get a whole answer or none, and
 *   what was acknowledged is kept.
 * - A second process on a DATA_DIR that a live process holds is refused, and the
 *   holder keeps serving with its data intact.
 * - A holder killed with its process group and left a zombie (not yet reaped) holds
 *   nothing: a restart at once starts and serves.
 * - PGlite is one session behind one connection: concurrent requests queue for
 *   it and nothing is lost or mixed up.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { entry as mainScript } from "../../scripts/bundle.ts"
import {
  createPet,
  freePort,
  initializedDataDir,
  isPet,
  killAll,
  listAll,
  mapConcurrent,
  newPet,
  nodeBin,
  type PetJson,
  removeTempDirs,
  type ServiceProcess,
  sleep,
  startService
} from "./ServiceProcess.ts"

const API_KEY = "embedded-process-key"

afterAll(async () => {
  await killAll()
  removeTempDirs()
})

describe.each(["SIGTERM", "SIGINT"] as const)("%s", (signal) => {
  afterEach(killAll)

  it("exits 0 promptly, releases the DATA_DIR lock, and the data is there on the next start", async () => {
    const dataDir = await initializedDataDir()
    const env = { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: dataDir }
    const service = await startService({ env })
    const pets = await mapConcurrent([0, 1, 2, 3, 4], 5, (i) => createPet(service, API_KEY, newPet(i)))
    // An idle keep-alive connection (fetch pools them) must not hold the process up.
    expect((await service.request("GET", "/healthz")).status).toBe(200)

    const { exit, exitMs: shutdownMs } = await service.exitTimed(signal, 10_000)
    expect(exit, service.output).toEqual({ code: 0, signal: null })
    // A few seconds, with room for a loaded two-core machine.
    expect(shutdownMs).toBeLessThan(8_000)
    expect(service.stderr).toBe("")
    expect(Fs.existsSync(Path.join(dataDir, "animal-store.pid"))).toBe(false)

    // The data survives a clean stop (checked once; the close path is the same for both signals).
    if (signal === "SIGTERM") {
      const next = await startService({ env })
      expect((await listAll(next, API_KEY)).pets).toEqual(pets)
      expect(await next.stop()).toEqual({ code: 0, signal: null })
    }
    console.info(`[shutdown ${signal}] exit 0 after ${shutdownMs} ms`)
  }, 60_000)
})

describe("SIGTERM during a burst of requests", () => {
  afterEach(killAll)

  it("answers in full or not at all, exits 0 within a few seconds, and keeps every acknowledged pet", async () => {
    const dataDir = await initializedDataDir()
    const env = { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: dataDir }
    const service = await startService({ env })
    for (let i = 0; i < 30; i++) await createPet(service, API_KEY, newPet(i, "before"))

    type Outcome =
      | { readonly kind: "response"; readonly status: number; readonly body: unknown; readonly complete: boolean }
      | { readonly kind: "error"; readonly message: string }
    const acknowledged: Array<PetJson> = []
    let answered = 0
    let signalledAt = 0
    const outcomes = await mapConcurrent(Array.from({ length: 400 }, (_, i) => i), 32, async (i): Promise<Outcome> => {
      // Writes and reads (the list reads a page of 100) interleaved.
      const [method, path, body] = i % 4 === 3
        ? ["GET", "/v1/pets?limit=100", undefined] as const
        : ["POST", "/v1/pets", newPet(i, "burst")] as const
      try {
        const response = await fetch(`${service.baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(15_000)
        })
        const text = await response.text()
        const length = response.headers.get("content-length")
        let parsed: unknown = undefined
        let complete = length === null || Buffer.byteLength(text) === Number(length)
        try {
          parsed = JSON.parse(text)
        } catch {
          complete = false
        }
        if (++answered === 100) {
          signalledAt = Date.now()
          service.signal("SIGTERM")
        }
        if (response.status === 201 && isPet(parsed)) acknowledged.push(parsed)
        return { kind: "response", status: response.status, body: parsed, complete }
      } catch (error) {
        return { kind: "error", message: String((error as Error).cause ?? error) }
      }
    })

    const exit = await service.waitForExit(10_000)
    const shutdownMs = Date.now() - signalledAt
    expect(exit, service.output).toEqual({ code: 0, signal: null })
    expect(shutdownMs).toBeLessThan(8_000)

    const responses = outcomes.flatMap((outcome) => outcome.kind === "response" ? [outcome] : [])
    const errors = outcomes.flatMap((outcome) => outcome.kind === "error" ? [outcome] : [])
    // Every answer that arrived is whole JSON and a success: the store stays open until the
    // server has drained.
    expect(responses.filter((response) => !response.complete)).toEqual([])
    expect(responses.filter((response) => response.status !== 201 && response.status !== 200)).toEqual([])
    expect(responses.length).toBeGreaterThanOrEqual(100)
    // Requests after the close are refused at the socket, never answered with a hang.
    expect(responses.length + errors.length).toBe(400)

    const next = await startService({ env })
    const stored = new Map((await listAll(next, API_KEY, { limit: 100 })).pets.map((pet) => [pet.id, pet]))
    for (const pet of acknowledged) expect(stored.get(pet.id)).toEqual(pet)
    expect(stored.size).toBeGreaterThanOrEqual(30 + acknowledged.length)
    expect(await next.stop()).toEqual({ code: 0, signal: null })

    console.info(
      `[shutdown burst] exit 0 ${shutdownMs} ms after SIGTERM; ${responses.length} answered ` +
        `(${acknowledged.length} pets acknowledged), ${errors.length} refused/cut ` +
        `(${[...new Set(errors.map((error) => error.message))].slice(0, 3).join("; ")})`
    )
  }, 60_000)
})

describe("a second process on the same DATA_DIR", () => {
  afterEach(killAll)

  it("is refused with exit 1 and a message that the DATA_DIR is in use; the first keeps serving", async () => {
    const dataDir = await initializedDataDir()
    const env = { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: dataDir }
    const first = await startService({ env })
    const before = [await createPet(first, API_KEY, newPet(0)), await createPet(first, API_KEY, newPet(1))]
    const lockFile = Path.join(dataDir, "animal-store.pid")
    const lockOwner = () => Fs.readFileSync(lockFile, "utf8").split(" ")[0]?.trim()
    expect(lockOwner()).toBe(String(first.pid))

    // Twice: a refused start must not disturb the lock for the next attempt either.
    for (const attempt of [1, 2]) {
      const second = await startService({ env, waitUntilListening: false })
      const exit = await second.waitForExit(20_000)
      expect(exit, second.output).toEqual({ code: 1, signal: null })
      const lines = second.stderr.split("\n").filter((line) => line.trim() !== "")
      expect(lines, `attempt ${attempt}\n${second.output}`).toHaveLength(1)
      expect(lines[0]).toContain(`DATA_DIR ${dataDir} is in use`)
      expect(lines[0]).toContain(String(first.pid))
      expect(second.stderr).not.toMatch(/^\s+at /m)
      expect(second.stdout).not.toContain("Listening on")
      expect(lockOwner()).toBe(String(first.pid))
    }

    // The first one never noticed.
    expect((await first.request("GET", "/readyz")).status).toBe(200)
    const after = await createPet(first, API_KEY, newPet(2))
    expect((await listAll(first, API_KEY)).pets).toEqual([...before, after])
    expect(first.exitStatus).toBeUndefined()
    expect(first.stderr).toBe("")

    // Once it has stopped cleanly, the directory is free again, with everything in it.
    expect(await first.stop()).toEqual({ code: 0, signal: null })
    const third = await startService({ env })
    expect((await listAll(third, API_KEY)).pets).toEqual([...before, after])
    expect(await third.stop()).toEqual({ code: 0, signal: null })
  }, 90_000)
})

/** The state letter of a process in /proc (`Z`: a zombie), or undefined once it is gone. */
const processState = (pid: number): string | undefined => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
  } catch {
    return undefined
  }
}

describe.skipIf(!Fs.existsSync("/proc/self/stat"))("a restart at once after the process group was killed", () => {
  it("starts and serves while the killed process is still a zombie", async () => {
    const dataDir = await initializedDataDir()
    const env = { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: dataDir }
    const port = await freePort()
    // The service alone in its own process group (setsid), under a parent that never reaps
    // it (the shell becomes `sleep`): killed, it stays a zombie until that parent ends, as
    // under a container without a reaping init.
    const parent = spawn("sh", ["-c", "setsid \"$0\" \"$1\" serve & echo \"pid $!\"; exec sleep 600", nodeBin, mainScript], {
      env: { PATH: process.env["PATH"] ?? "", PORT: String(port), RATE_LIMIT: "off", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      let output = ""
      parent.stdout.setEncoding("utf8").on("data", (chunk: string) => output += chunk)
      parent.stderr.setEncoding("utf8").on("data", (chunk: string) => output += chunk)
      for (let waited = 0; !/"Listening on http:\/\//.test(output); waited += 100) {
        if (waited > 30_000) throw new Error(`the first service did not start\n${output}`)
        await sleep(100)
      }
      const pid = Number(/^pid (\d+)$/m.exec(output)?.[1])
      const created = await fetch(`http://127.0.0.1:${port}/v1/pets`, {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify(newPet(0))
      })
      expect(created.status).toBe(201)
      const pet = await created.json() as PetJson
      const lockFile = Path.join(dataDir, "animal-store.pid")
      expect(Fs.readFileSync(lockFile, "utf8").split(" ")[0]?.trim()).toBe(String(pid))

      // The whole group, as a supervisor stops a unit: the process stays a zombie.
      process.kill(-pid, "SIGKILL")
      for (let waited = 0; processState(pid) !== "Z"; waited += 10) {
        if (waited > 5_000) throw new Error(`pid ${pid} is ${processState(pid)}, not a zombie`)
        await sleep(10)
      }
      expect(Fs.readFileSync(lockFile, "utf8").split(" ")[0]?.trim()).toBe(String(pid))

      const second = await startService({ env })
      expect(processState(pid), "the restart happened while the old process was a zombie").toBe("Z")
      expect(Fs.readFileSync(lockFile, "utf8").split(" ")[0]?.trim()).toBe(String(second.pid))
      expect((await listAll(second, API_KEY)).pets).toEqual([pet])
      await createPet(second, API_KEY, newPet(1))
      expect(await second.stop()).toEqual({ code: 0, signal: null })
    } finally {
      // The parent ends; init reaps the zombie.
      parent.kill("SIGKILL")
      await killAll()
    }
  }, 90_000)
})

describe("embedded store under concurrent requests", () => {
  let service: ServiceProcess
  let dataDir: string
  const created: Array<PetJson> = []

  afterEach(async (context) => {
    // Later tests build on earlier ones; a failure leaves nothing running.
    if (context.task.result?.state === "fail") await killAll()
  })

  it("500 concurrent creates give 500 distinct ids, each readable", async () => {
    dataDir = await initializedDataDir()
    service = await startService({ env: { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: dataDir } })
    const startedAt = performance.now()
    const pets = await Promise.all(Array.from({ length: 500 }, (_, i) => createPet(service, API_KEY, newPet(i, "c"))))
    const createMs = performance.now() - startedAt
    created.push(...pets)
    expect(new Set(pets.map((pet) => pet.id)).size).toBe(500)
    // Each answer carries the pet that was asked for (no crossed responses).
    pets.forEach((pet, i) => expect({ ...pet, id: 0 }).toEqual({ ...newPet(i, "c"), id: 0, tags: [], version: 1 }))

    const mismatched = await mapConcurrent(pets, 32, async (pet) => {
      const result = await service.request("GET", `/v1/pets/${pet.id}`, { apiKey: API_KEY })
      return JSON.stringify(result.json) === JSON.stringify(pet) ? undefined : { pet, got: result.text }
    })
    expect(mismatched.filter((item) => item !== undefined)).toEqual([])
    expect((await listAll(service, API_KEY, { limit: 100 })).pets).toEqual([...pets].sort((a, b) => a.id - b.id))
    console.info(`[embedded concurrency] 500 concurrent creates in ${createMs.toFixed(0)} ms`)
  }, 90_000)

  it("reads and writes interleaved at once lose nothing; paging never repeats or skips", async () => {
    const writes = Array.from({ length: 300 }, (_, i) => i)
    let reads = 0
    const readErrors: Array<string> = []
    let writing = true
    // Readers keep paging and fetching while the writers run.
    const reader = async () => {
      while (writing) {
        const { pets } = await listAll(service, API_KEY, { limit: 100 })
        const ids = pets.map((pet) => pet.id)
        // Keyset paging: ascending, no repeats, and everything acknowledged before the walk began.
        if (ids.some((id, i) => i > 0 && id <= (ids[i - 1] ?? 0))) readErrors.push("not strictly ascending")
        for (const pet of created.slice(0, 500)) if (!ids.includes(pet.id)) readErrors.push(`missing ${pet.id}`)
        const sample = created[reads % created.length]
        if (sample !== undefined) {
          const one = await service.request("GET", `/v1/pets/${sample.id}`, { apiKey: API_KEY })
          if (!isPet(one.json) || one.json.id !== sample.id) readErrors.push(`GET ${sample.id}: ${one.status}`)
        }
        reads++
      }
    }
    const readers = Promise.all([reader(), reader(), reader()])
    const written = await mapConcurrent(writes, 50, (i) => createPet(service, API_KEY, newPet(i, "rw")))
    writing = false
    await readers
    expect(readErrors.slice(0, 10)).toEqual([])
    expect(reads).toBeGreaterThan(0)
    created.push(...written)

    const all = created.length
    expect(new Set(created.map((pet) => pet.id)).size).toBe(all)
    const { pets } = await listAll(service, API_KEY, { limit: 100 })
    expect(pets).toEqual([...created].sort((a, b) => a.id - b.id))
    for (const status of ["available", "pending", "sold"] as const) {
      expect((await listAll(service, API_KEY, { status, limit: 100 })).pets).toEqual(
        pets.filter((pet) => pet.status === status)
      )
    }
  }, 90_000)

  it("and all of it is still there after a clean restart", async () => {
    expect(await service.stop()).toEqual({ code: 0, signal: null })
    expect(service.stderr).toBe("")
    const next = await startService({ env: { API_KEYS: API_KEY, STORE: "embedded", DATA_DIR: dataDir } })
    expect((await listAll(next, API_KEY, { limit: 100 })).pets).toEqual([...created].sort((a, b) => a.id - b.id))
    expect(await next.stop()).toEqual({ code: 0, signal: null })
  }, 60_000)
})
