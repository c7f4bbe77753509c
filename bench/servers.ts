/**
 * The servers under test, each started as its own process with a clean environment:
 * Animal Store (as `npm start` runs it), the bare node:http reference, the Fastify peers (bare,
 * and with Animal Store's features) and the Effect floor peers.
 * Every process is tracked by lib.ts and stopped at the end of the run.
 */
import type { ChildProcess } from "node:child_process"
import { closeSync, openSync, readFileSync } from "node:fs"
import { get } from "node:http"
import { join } from "node:path"
import { bundleService } from "../scripts/bundle.ts"
import { BENCH_DIR, freePort, HOST, NODE, ROOT, sleep, spawnTracked, stopChild } from "./lib.ts"
import type { PeerFeature } from "./peers/peer-args.ts"

export interface Server {
  readonly name: string
  readonly port: number
  readonly child: ChildProcess
  /** performance.now() when the process was spawned. */
  readonly spawnedAt: number
  readonly logPath: string | undefined
  readonly stderr: () => string
}

/** Status of one GET (0 when nothing answered). */
export const httpStatus = (port: number, path: string, headers: Record<string, string> = {}): Promise<number> =>
  new Promise((resolve) => {
    const req = get({ host: HOST, port, path, headers, timeout: 1_000, agent: false }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", () => resolve(0))
    req.on("timeout", () => req.destroy())
  })

/**
 * Polls `path` until it answers 200 and returns the milliseconds since the process was
 * spawned. Polls every 5 ms: a refused connection costs well under that.
 */
export const waitFor200 = async (
  server: Server,
  path: string,
  headers: Record<string, string>,
  timeoutMs: number
): Promise<number> => {
  const deadline = server.spawnedAt + timeoutMs
  while (performance.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${server.name} exited during startup: ${diagnostics(server)}`)
    }
    if ((await httpStatus(server.port, path, headers)) === 200) return performance.now() - server.spawnedAt
    await sleep(5)
  }
  throw new Error(`${server.name} did not answer 200 on ${path} within ${timeoutMs} ms`)
}

/**
 * Waits until the server answers the API itself: Animal Store's /healthz says 200 as
 * soon as the port is open, before its store is ready (everything else is 503 until then).
 */
const serving = async (server: Server, apiKey: string, timeoutMs: number): Promise<Server> => {
  try {
    await waitFor200(server, "/v1/pets?limit=1", { authorization: `Bearer ${apiKey}` }, timeoutMs)
    return server
  } catch (error) {
    // One that never got there must not go on using the cores the others are measured on.
    await stopChild(server.child)
    throw error
  }
}

/** A command the server's node runs under (valgrind, say): its words before node's. */
export type Wrapper = ReadonlyArray<string>

const spawnServer = (
  name: string,
  args: ReadonlyArray<string>,
  port: number,
  env: NodeJS.ProcessEnv,
  logPath: string | undefined,
  wrapper: Wrapper = []
): Server => {
  const logFd = logPath === undefined ? "ignore" : openSync(logPath, "w")
  const spawnedAt = performance.now()
  const [command, ...words] = [...wrapper, NODE, ...args]
  const child = spawnTracked(command!, words, { cwd: ROOT, stdio: ["ignore", logFd, "pipe"], env })
  if (typeof logFd === "number") closeSync(logFd)
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-8_000)
  })
  return { name, port, child, spawnedAt, logPath, stderr: () => stderr }
}

/** Where a server's stdout, its request log, goes: a file in the run's work directory, for every server that logs. */
const logFile = (work: string, name: string, port: number): string =>
  join(work, `${name.replace(/[^a-z0-9]+/gi, "_")}-${port}.log`)

const baseEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "" })

/**
 * What `npm start` runs (`NAME=value … node <flags> build/main.js`), read from package.json so
 * that the benchmark measures the service as operators start it, node flags included.
 */
const startScript = (() => {
  const script: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start
  const words = script.trim().split(/\s+/)
  const nodeAt = words.indexOf("node")
  if (nodeAt === -1 || words.slice(0, nodeAt).some((word) => !word.includes("="))) {
    throw new Error(`cannot read the start script: ${script}`)
  }
  const env = Object.fromEntries(words.slice(0, nodeAt).map((word) => {
    const [name, ...value] = word.split("=")
    return [name!, value.join("=")]
  }))
  return { env, args: words.slice(nodeAt + 1) }
})()

/** `npm start`'s prestart: the bundle, built once per run when `src/` has changed. */
let bundled: Promise<string> | undefined

/**
 * Spawns the service as `npm start` does (no inherited DATABASE_URL etc.) without waiting
 * for it; stdout, the request log, goes to a file in `work`.
 */
export const spawnService = async (
  options: {
    readonly name: string
    readonly work: string
    readonly apiKey: string
    readonly env: Record<string, string>
    readonly wrapper?: Wrapper
  }
): Promise<Server> => {
  await (bundled ??= bundleService())
  const port = await freePort()
  const logPath = logFile(options.work, options.name, port)
  return spawnServer(options.name, startScript.args, port, {
    ...baseEnv(),
    ...startScript.env,
    HOST,
    PORT: String(port),
    API_KEYS: options.apiKey,
    // A quota no run reaches: every request pays for the limiter, none is refused.
    RATE_LIMIT: process.env["BENCH_RATE_LIMIT"] ?? "100000000/1s",
    ...options.env
  }, logPath, options.wrapper)
}

export const startService = async (
  options: Parameters<typeof spawnService>[0] & { readonly timeoutMs?: number }
): Promise<Server> => {
  return serving(await spawnService(options), options.apiKey, options.timeoutMs ?? 90_000)
}

export const startReference = async (apiKey: string, wrapper?: Wrapper, timeoutMs = 10_000): Promise<Server> => {
  const port = await freePort()
  const server = spawnServer(
    "reference (node:http)",
    [`${BENCH_DIR}reference-server.ts`, JSON.stringify({ port, apiKeys: [apiKey] })],
    port,
    baseEnv(),
    undefined,
    wrapper
  )
  return serving(server, apiKey, timeoutMs)
}

interface PeerOptions {
  readonly name: string
  readonly apiKey: string
  /** "sqlpg" (@effect/sql-pg): the Effect floor only. */
  readonly store: "map" | "pg" | "sqlpg"
  readonly databaseUrl?: string
  readonly wrapper?: Wrapper
  /** How long it may take to serve (default 20 s). */
  readonly timeoutMs?: number
}

/** A peer that logs: its stdout (the request log) goes to a file in `work`, as Animal Store's does. */
interface LoggingPeerOptions extends PeerOptions {
  readonly work: string
}

/** The Fastify peer with the features, some of them perhaps left out (peers/fastify-server.ts). */
interface FeaturesPeerOptions extends LoggingPeerOptions {
  readonly off?: ReadonlyArray<PeerFeature>
}

const startPeer = async (
  script: string,
  options: PeerOptions & { readonly work?: string; readonly features?: boolean; readonly off?: ReadonlyArray<PeerFeature> },
  node: { readonly flags: ReadonlyArray<string>; readonly env: Record<string, string> } = { flags: [], env: {} }
): Promise<Server> => {
  const port = await freePort()
  const args = {
    port,
    apiKeys: [options.apiKey],
    store: options.store,
    databaseUrl: options.databaseUrl,
    features: options.features,
    off: options.off
  }
  const logPath = options.work === undefined ? undefined : logFile(options.work, options.name, port)
  const server = spawnServer(
    options.name,
    [...node.flags, `${BENCH_DIR}peers/${script}`, JSON.stringify(args)],
    port,
    { ...baseEnv(), ...node.env },
    logPath,
    options.wrapper
  )
  return serving(server, options.apiKey, options.timeoutMs ?? 20_000)
}

/** Bare Fastify: its defaults, logger off (stdout ignored: it writes nothing). */
export const startFastify = (options: PeerOptions): Promise<Server> => startPeer("fastify-server.ts", options)

/**
 * Fastify with Animal Store's features (peers/fastify-server.ts with `features`), the fair
 * peer: its pino request log goes to a file, as Animal Store's does. `off` leaves some features out.
 */
export const startFastifyFeatures = (options: FeaturesPeerOptions): Promise<Server> =>
  startPeer("fastify-server.ts", { ...options, features: true })

/**
 * The Effect floor: Effect's HTTP platform with the reference's request rules
 * (peers/effect-server.ts), under the node flags and environment of `npm start`, so that
 * what separates it from Animal Store is the code, not the young generation's size. With
 * `work`, its stdout goes to a file there (it writes no request log; a GC trace, say).
 */
export const startEffect = (options: PeerOptions & { readonly work?: string }): Promise<Server> =>
  startPeer("effect-server.ts", options, {
    flags: startScript.args.filter((arg) => arg.startsWith("-")),
    env: startScript.env
  })

/** Lines a server wrote to stdout (its request log). */
export const logLines = (server: Server): number => {
  if (server.logPath === undefined) return 0
  try {
    return readFileSync(server.logPath, "utf8").split("\n").filter((line) => line !== "").length
  } catch {
    return 0
  }
}

/** What a server said about trouble: its stderr and its last warning or error log lines. */
export const diagnostics = (server: Server): string => {
  let warnings: Array<string> = []
  if (server.logPath !== undefined) {
    try {
      warnings = readFileSync(server.logPath, "utf8").split("\n").filter((line) => /"level":"(WARN|ERROR|FATAL)"/.test(line))
    } catch {
      warnings = []
    }
  }
  const said = [server.stderr().trim().slice(-600), ...warnings.slice(-3).map((line) => line.slice(0, 600))]
    .filter((text) => text !== "")
  return said.length === 0 ? "(nothing on stderr, no warning in its log)" : said.join(" | ")
}
