/**
 * A throwaway `redis-server` on a free port, started and stopped by the test itself
 * (never the system's Redis on 6379): no persistence, bound to 127.0.0.1. `kill` and
 * `start` again on the same port simulate an outage and its end; `pause` and `resume`
 * (SIGSTOP, SIGCONT) one where Redis keeps its connections but stops answering.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { createServer } from "node:net"
import { onTestFinished } from "vitest"

const BINARY = process.env["REDIS_SERVER"] ?? "redis-server"

/**
 * Whether the Redis runs happen. On CI they are mandatory (`.ci/run` installs the
 * Debian package), so a missing binary fails there instead of skipping.
 */
export const redisAvailable: boolean = (() => {
  const probe = spawnSync(BINARY, ["--version"], { encoding: "utf8" })
  if (probe.status === 0) return true
  if (process.env["CI"] === "true") throw new Error(`CI=true but ${BINARY} cannot be run`)
  console.warn(`\n  SKIPPED: the Redis runs, because ${BINARY} cannot be run (apt-get install redis-server).\n`)
  return false
})()

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")))
    })
  })

export class RedisServer {
  #child: ChildProcess | undefined
  readonly port: number
  constructor(port: number) {
    this.port = port
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** The running server's process id (to freeze it with SIGSTOP), if it runs. */
  get pid(): number | undefined {
    return this.#child?.pid
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    const child = spawn(BINARY, ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    this.#child = child
    let output = ""
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000)
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes("Ready to accept connections")) {
          clearTimeout(timer)
          resolve()
        }
      })
      child.once("exit", (code) => {
        clearTimeout(timer)
        reject(new Error(`redis-server exited with ${code}:\n${output}`))
      })
    })
  }

  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void {
    this.#child?.kill("SIGSTOP")
  }

  /** Lets a paused server go on (SIGCONT). Harmless on one that is not paused. */
  resume(): void {
    this.#child?.kill("SIGCONT")
  }

  /** SIGKILLs the server and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.#child
    this.#child = undefined
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGKILL")
    await exited
  }
}

/** A running Redis on a free port, killed when the current test finishes. */
export const startRedis = async (): Promise<RedisServer> => {
  const server = new RedisServer(await freePort())
  onTestFinished(() => server.kill())
  await server.start()
  return server
}
