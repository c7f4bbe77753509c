/**
 * Runs the real service as `npm start` does (`node build/main.js serve`, the bundle that
 * ServiceBundleSetup brings up to date) as a child process on a free port
 * and talks to it over a real socket with the global `fetch`.
 *
 * Every process started here is remembered until it has exited: call
 * {@link killAll} from `afterEach`/`afterAll` so that a failed assertion never
 * leaves a server behind. Temporary directories made with {@link tempDir} are
 * removed by {@link removeTempDirs}.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createServer } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { entry as mainScript } from "../../scripts/bundle.ts"
import { expectDocumentedResponse } from "../adapters/http/OpenApiValidator.ts"

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url))
/** The project's Node 24; the system Node may be older and cannot run the TypeScript entry point. */
export const nodeBin = Path.join(repoRoot, "node_modules/.bin/node")

// ---------------------------------------------------------------------------
// Temporary directories

const tempDirs = new Set<string>()

/** A fresh directory under the OS temp dir, removed by {@link removeTempDirs}. */
export const tempDir = (prefix = "animal-store-main-"): string => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
  tempDirs.add(dir)
  return dir
}

export const removeTempDirs = (): void => {
  for (const dir of tempDirs) Fs.rmSync(dir, { recursive: true, force: true })
  tempDirs.clear()
  template = undefined
}

/** A stopped, already initialized embedded DATA_DIR, made once per test file. */
let template: Promise<string> | undefined

/**
 * A DATA_DIR holding an initialized, cleanly closed embedded database (a copy of
 * one made by the service itself), so a test does not pay initdb again.
 */
export const initializedDataDir = async (): Promise<string> => {
  template ??= (async () => {
    const dir = Path.join(tempDir("animal-store-template-"), "data")
    const service = await startService({
      env: { STORE: "embedded", DATA_DIR: dir, API_KEYS: "template-key" },
      startTimeoutMs: 60_000
    })
    const exit = await service.stop()
    if (exit.code !== 0) throw new Error(`template service exited with ${JSON.stringify(exit)}\n${service.output}`)
    return dir
  })()
  const source = await template
  const target = Path.join(tempDir(), "data")
  Fs.cpSync(source, target, { recursive: true })
  return target
}

// ---------------------------------------------------------------------------
// Ports

/** A port nobody listens on right now (the OS picks it; we release it at once). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (address === null || typeof address === "string") {
        server.close()
        reject(new Error("no port"))
        return
      }
      server.close(() => resolve(address.port))
    })
  })

const portTaken = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer()
    server.once("error", () => resolve(true))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(false)))
  })

// ---------------------------------------------------------------------------
// The process

export interface ExitStatus {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface StartOptions {
  /** Variables for the service, on top of a minimal PATH/HOME environment (nothing else is inherited). */
  readonly env?: Readonly<Record<string, string>>
  /** Fixed port; a free one is picked (and retried on a bind race) when omitted. */
  readonly port?: number
  /** Wait for the "Listening on" log line (default). `false` returns right after spawning. */
  readonly waitUntilListening?: boolean
  /** How long to wait for "Listening on"; the first open of an empty embedded DATA_DIR runs initdb. */
  readonly startTimeoutMs?: number
  readonly cwd?: string
  /** What node runs: the bundle's entry and `serve` by default; flags and another entry for a tree made elsewhere. */
  readonly nodeArgs?: ReadonlyArray<string>
}

const running = new Set<ServiceProcess>()

const baseEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const name of ["PATH", "HOME", "LANG", "TMPDIR", "TZ"]) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  return env
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export class ServiceProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly baseUrl: string
  readonly startedAt: number
  /** Milliseconds from spawn to the "Listening on" line, once seen. */
  listeningAfterMs: number | undefined
  readonly exited: Promise<ExitStatus>
  #stdout = ""
  #stderr = ""
  #exit: ExitStatus | undefined
  readonly #listeners = new Set<() => void>()
  readonly #logHidesListening: boolean

  constructor(
    port: number,
    env: Readonly<Record<string, string>>,
    cwd: string,
    nodeArgs: ReadonlyArray<string> = [mainScript, "serve"]
  ) {
    this.#logHidesListening = ["warn", "error", "fatal", "none"].includes(env["LOG_LEVEL"] ?? "info")
    this.port = port
    this.baseUrl = `http://127.0.0.1:${port}`
    this.startedAt = Date.now()
    this.child = spawn(nodeBin, nodeArgs, {
      cwd,
      // Unlimited unless a test asks for limits: the bursts of the other tests are not abuse.
      env: { ...baseEnv(), PORT: String(port), RATE_LIMIT: "off", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    running.add(this)
    this.child.stdout?.setEncoding("utf8")
    this.child.stderr?.setEncoding("utf8")
    this.child.stdout?.on("data", (chunk: string) => {
      this.#stdout += chunk
      this.#notify()
    })
    this.child.stderr?.on("data", (chunk: string) => {
      this.#stderr += chunk
      this.#notify()
    })
    this.exited = new Promise((resolve) => {
      // "close" fires after the exit and once stdout/stderr are fully read.
      this.child.once("close", (code, signal) => {
        this.#exit = { code, signal }
        running.delete(this)
        this.#notify()
        resolve(this.#exit)
      })
      this.child.once("error", () => {
        this.#exit = { code: null, signal: null }
        running.delete(this)
        this.#notify()
        resolve(this.#exit)
      })
    })
  }

  #notify(): void {
    for (const listener of this.#listeners) listener()
  }

  get pid(): number {
    return this.child.pid ?? -1
  }
  get stdout(): string {
    return this.#stdout
  }
  get stderr(): string {
    return this.#stderr
  }
  get exitStatus(): ExitStatus | undefined {
    return this.#exit
  }
  /** Everything the process printed, for failure messages. */
  get output(): string {
    return `--- stdout (pid ${this.pid}) ---\n${this.#stdout}\n--- stderr ---\n${this.#stderr}`
  }

  /** stdout lines that are JSON objects (the structured log). */
  logLines(): Array<Record<string, unknown>> {
    const lines: Array<Record<string, unknown>> = []
    for (const line of this.#stdout.split("\n")) {
      if (!line.startsWith("{")) continue
      try {
        const parsed: unknown = JSON.parse(line)
        if (typeof parsed === "object" && parsed !== null) lines.push(parsed as Record<string, unknown>)
      } catch {
        // not a log line
      }
    }
    return lines
  }

  /**
   * Resolves once `predicate` holds for the output so far; rejects when the
   * process exits first or the time runs out.
   */
  waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (predicate()) return done(undefined)
        if (this.#exit !== undefined) {
          return done(new Error(`service exited (${JSON.stringify(this.#exit)}) before ${what}\n${this.output}`))
        }
      }
      const timer = setTimeout(
        () => done(new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${this.output}`)),
        timeoutMs
      )
      const done = (error: Error | undefined) => {
        clearTimeout(timer)
        this.#listeners.delete(check)
        if (error === undefined) resolve()
        else reject(error)
      }
      this.#listeners.add(check)
      check()
    })
  }

  /**
   * Resolves at the "Listening on" log line (logged once the application is attached),
   * or, for runs whose LOG_LEVEL hides that line, once GET /readyz answers 200 (/healthz
   * says 200 as soon as the port is open, before the store is ready). Other runs send no
   * probe, so their request log holds only what a test sent.
   */
  async waitUntilListening(timeoutMs: number): Promise<void> {
    let healthy = false
    let polling = this.#logHidesListening
    const poll = async () => {
      while (polling && !healthy && this.#exit === undefined) {
        await sleep(250)
        try {
          const response = await fetch(`${this.baseUrl}/readyz`, { signal: AbortSignal.timeout(1_000) })
          await response.arrayBuffer()
          if (response.status === 200) {
            healthy = true
            this.#notify()
          }
        } catch {
          // not up yet
        }
      }
    }
    const poller = poll()
    try {
      await this.waitFor(
        () => healthy || /"Listening on http:\/\//.test(this.#stdout),
        timeoutMs,
        "\"Listening on\" or a ready /readyz"
      )
    } finally {
      // Not awaited: a poll in progress ends by itself within its own timeout.
      polling = false
      void poller
    }
    this.listeningAfterMs ??= Date.now() - this.startedAt
  }

  signal(signal: NodeJS.Signals): void {
    if (this.#exit === undefined) this.child.kill(signal)
  }

  /** Sends `signal`, then waits for the exit (as waitForExit) and says how long it took. */
  async exitTimed(signal: NodeJS.Signals, timeoutMs: number): Promise<{ readonly exit: ExitStatus; readonly exitMs: number }> {
    const signalledAt = Date.now()
    this.signal(signal)
    const exit = await this.waitForExit(timeoutMs)
    return { exit, exitMs: Date.now() - signalledAt }
  }

  /** Resolves with the exit status; rejects when the process is still running after `timeoutMs`. */
  async waitForExit(timeoutMs: number): Promise<ExitStatus> {
    const result = await this.#exitedWithin(timeoutMs)
    if (result === "timeout") throw new Error(`process still running ${timeoutMs} ms later\n${this.output}`)
    return result
  }

  #exitedWithin(timeoutMs: number): Promise<ExitStatus | "timeout"> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<"timeout">((resolve) => timer = setTimeout(() => resolve("timeout"), timeoutMs))
    return Promise.race([this.exited, timeout]).finally(() => clearTimeout(timer))
  }

  /** `kill -9` and wait for the process to be gone. */
  async kill9(): Promise<ExitStatus> {
    this.signal("SIGKILL")
    return this.exited
  }

  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  async stop(graceMs = 10_000): Promise<ExitStatus> {
    this.signal("SIGTERM")
    const result = await this.#exitedWithin(graceMs)
    if (result !== "timeout") return result
    return this.kill9()
  }

  // ---- HTTP --------------------------------------------------------------

  /** A real HTTP request on the real socket; `timeoutMs` aborts it so that a hang fails the test. */
  async request(
    method: string,
    path: string,
    options: {
      readonly apiKey?: string
      readonly body?: unknown
      readonly headers?: Readonly<Record<string, string>>
      readonly timeoutMs?: number
    } = {}
  ): Promise<HttpResult> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.apiKey !== undefined) headers["authorization"] = `Bearer ${options.apiKey}`
    if (options.body !== undefined) headers["content-type"] ??= "application/json"
    const started = performance.now()
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000)
    })
    const text = await response.text()
    const elapsedMs = performance.now() - started
    let json: unknown = undefined
    try {
      json = text === "" ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    // Every answer to a documented operation must be one the OpenAPI document promises.
    await expectDocumentedResponse({ method, url: path }, { status: response.status, headers: response.headers, text })
    return { status: response.status, headers: response.headers, text, json, elapsedMs }
  }
}

export interface HttpResult {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed body, `undefined` when it was empty or not JSON. */
  readonly json: unknown
  readonly elapsedMs: number
}

/**
 * Spawns the service and (by default) waits until it listens. A port picked
 * here can be taken by someone else before the child binds it; such a start is
 * retried on another port.
 */
export const startService = async (options: StartOptions = {}): Promise<ServiceProcess> => {
  const env = options.env ?? {}
  const cwd = options.cwd ?? Os.tmpdir()
  for (let attempt = 1;; attempt++) {
    const port = options.port ?? await freePort()
    const service = new ServiceProcess(port, env, cwd, options.nodeArgs)
    if (options.waitUntilListening === false) return service
    try {
      await service.waitUntilListening(options.startTimeoutMs ?? 30_000)
      return service
    } catch (error) {
      // Someone else holds the port now: the child lost the race for it (its own message
      // for that case does not say so, hence the probe).
      const bindRace = options.port === undefined && attempt < 3 && service.exitStatus?.code === 1 &&
        await portTaken(port)
      if (!bindRace) {
        await service.kill9()
        throw error
      }
    }
  }
}

/** SIGKILLs every service still running and waits until each is gone. */
export const killAll = async (): Promise<void> => {
  await Promise.all([...running].map((service) => service.kill9()))
}

// Last resort when the test worker itself goes away.
process.once("exit", () => {
  for (const service of running) service.child.kill("SIGKILL")
})

// ---------------------------------------------------------------------------
// The API, from a client's side

export interface PetJson {
  readonly id: number
  readonly name: string
  readonly categoryId: number
  readonly status?: "available" | "pending" | "sold"
  readonly tags: ReadonlyArray<string>
  readonly version: number
}

export const isPet = (value: unknown): value is PetJson =>
  typeof value === "object" && value !== null &&
  typeof (value as PetJson).id === "number" && typeof (value as PetJson).name === "string" &&
  typeof (value as PetJson).categoryId === "number" && typeof (value as PetJson).version === "number"

export const STATUSES = ["available", "pending", "sold"] as const

/** The i-th pet of a test run: varied names, categories and statuses (some without one). */
export const newPet = (i: number, tag = "pet"): { name: string; categoryId: number; status?: string } => {
  const status = i % 4 === 3 ? undefined : STATUSES[i % 3]
  return status === undefined
    ? { name: `${tag}-${i} Ünïcødé 🐕`, categoryId: 1000 + (i % 7) }
    : { name: `${tag}-${i} Ünïcødé 🐕`, categoryId: 1000 + (i % 7), status }
}

/** Creates a pet; fails the caller unless the answer is a 201 with a Pet body. */
export const createPet = async (
  service: ServiceProcess,
  apiKey: string,
  pet: unknown
): Promise<PetJson> => {
  const result = await service.request("POST", "/v1/pets", { apiKey, body: pet })
  if (result.status !== 201 || !isPet(result.json)) {
    throw new Error(`POST /v1/pets answered ${result.status} ${result.text}`)
  }
  return result.json
}

/** Follows the `Link: rel="next"` cursor from the first page to the last. */
export const listAll = async (
  service: ServiceProcess,
  apiKey: string,
  query: { readonly limit?: number; readonly status?: string } = {}
): Promise<{ pets: Array<PetJson>; pages: number }> => {
  const params = new URLSearchParams()
  if (query.limit !== undefined) params.set("limit", String(query.limit))
  if (query.status !== undefined) params.set("status", query.status)
  let path: string | undefined = `/v1/pets${params.size > 0 ? `?${params}` : ""}`
  const pets: Array<PetJson> = []
  let pages = 0
  while (path !== undefined) {
    const result = await service.request("GET", path, { apiKey })
    if (result.status !== 200 || !Array.isArray(result.json)) {
      throw new Error(`GET ${path} answered ${result.status} ${result.text}`)
    }
    pages++
    for (const pet of result.json) {
      if (!isPet(pet)) throw new Error(`GET ${path}: not a pet: ${JSON.stringify(pet)}`)
      pets.push(pet)
    }
    const link = result.headers.get("link")
    path = link === null ? undefined : /^<([^>]+)>;\s*rel="next"$/.exec(link)?.[1]
    if (link !== null && path === undefined) throw new Error(`unexpected Link header: ${link}`)
    if (pages > 10_000) throw new Error("paging does not end")
  }
  return { pets, pages }
}

/** Runs `task` over `items` with at most `concurrency` in flight. */
export const mapConcurrent = async <A, B>(
  items: ReadonlyArray<A>,
  concurrency: number,
  task: (item: A, index: number) => Promise<B>
): Promise<Array<B>> => {
  const results = new Array<B>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await task(items[index] as A, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
  return results
}

/** Polls `probe` until it returns true; resolves with the elapsed milliseconds. */
export const eventually = async (
  probe: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  intervalMs = 100
): Promise<number> => {
  const started = performance.now()
  while (true) {
    let ok = false
    try {
      ok = await probe()
    } catch {
      ok = false
    }
    if (ok) return performance.now() - started
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(intervalMs)
  }
}

export { sleep }
