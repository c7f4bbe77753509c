/**
 * A tiny TCP proxy, put between the service and PostgreSQL so a test can take
 * the database away without touching the real server (other tests use it).
 *
 * - `refuse`: every open connection is torn down and the port stops accepting,
 *   as when the database host is down (connection refused / reset).
 * - `blackhole`: nothing gets through in either direction, but nothing is
 *   closed either; new connections are accepted and then hang, as when the
 *   host is unreachable behind a firewall that drops packets.
 * - `restore`: traffic flows again; after a blackhole the held connections
 *   resume where they stopped (like TCP after a partition heals).
 */
import { connect, createServer, type Server, type Socket } from "node:net"

interface Pair {
  readonly client: Socket
  upstream: Socket | undefined
}

export type ProxyState = "forward" | "refuse" | "blackhole"

export class TcpProxy {
  readonly port: number
  readonly #target: { readonly host: string; readonly port: number }
  readonly #server: Server
  readonly #pairs = new Set<Pair>()
  #state: ProxyState = "forward"
  /** Connections accepted so far, for reporting. */
  accepted = 0

  private constructor(server: Server, port: number, target: { readonly host: string; readonly port: number }) {
    this.#server = server
    this.port = port
    this.#target = target
    server.on("connection", (client) => this.#accept(client))
  }

  static async start(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
    const server = createServer()
    const port = await new Promise<number>((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        if (address === null || typeof address === "string") reject(new Error("no port"))
        else resolve(address.port)
      })
    })
    return new TcpProxy(server, port, target)
  }

  get state(): ProxyState {
    return this.#state
  }

  get openConnections(): number {
    return this.#pairs.size
  }

  #accept(client: Socket): void {
    this.accepted++
    if (this.#state === "refuse") {
      client.destroy()
      return
    }
    const pair: Pair = { client, upstream: undefined }
    this.#pairs.add(pair)
    client.on("error", () => this.#drop(pair))
    client.on("close", () => this.#drop(pair))
    if (this.#state === "blackhole") {
      client.pause()
      return
    }
    this.#connectUpstream(pair)
  }

  #connectUpstream(pair: Pair): void {
    const upstream = connect(this.#target)
    pair.upstream = upstream
    upstream.on("error", () => this.#drop(pair))
    upstream.on("close", () => this.#drop(pair))
    pair.client.pipe(upstream)
    upstream.pipe(pair.client)
  }

  #drop(pair: Pair): void {
    if (!this.#pairs.delete(pair)) return
    pair.client.destroy()
    pair.upstream?.destroy()
  }

  /** Takes the database away. */
  async cut(mode: "refuse" | "blackhole"): Promise<void> {
    if (this.#state !== "forward") throw new Error(`proxy already cut (${this.#state})`)
    this.#state = mode
    if (mode === "refuse") {
      await new Promise<void>((resolve) => {
        this.#server.close(() => resolve())
        for (const pair of [...this.#pairs]) this.#drop(pair)
      })
      return
    }
    for (const { client, upstream } of this.#pairs) {
      client.unpipe()
      upstream?.unpipe()
      client.pause()
      upstream?.pause()
    }
  }

  /** Lets traffic through again, on the same port. */
  async restore(): Promise<void> {
    const previous = this.#state
    this.#state = "forward"
    if (previous === "refuse") {
      await new Promise<void>((resolve, reject) => {
        this.#server.once("error", reject)
        this.#server.listen(this.port, "127.0.0.1", () => {
          this.#server.off("error", reject)
          resolve()
        })
      })
    } else if (previous === "blackhole") {
      for (const pair of this.#pairs) {
        if (pair.upstream === undefined) {
          this.#connectUpstream(pair)
        } else {
          pair.client.pipe(pair.upstream)
          pair.upstream.pipe(pair.client)
        }
      }
    }
  }

  async close(): Promise<void> {
    this.#state = "refuse"
    for (const pair of [...this.#pairs]) this.#drop(pair)
    await new Promise<void>((resolve) => {
      if (!this.#server.listening) return resolve()
      this.#server.close(() => resolve())
    })
  }
}
