/**
 * HTTP/1.1 over a raw TCP socket, for the cases a real HTTP client will not
 * produce: stray bytes after a request, malformed request lines, oversized
 * headers, trickled headers, deep pipelining. Every byte that comes back is
 * parsed into responses as it arrives, so a test can see exactly what the
 * server wrote, in order, and when the connection ended.
 */
import { connect, type Socket } from "node:net"

export interface RawResponse {
  readonly status: number
  /** Header names lowercased; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** The parsed body, `undefined` when it is empty or not JSON. */
  readonly json: unknown
  /** Milliseconds from the connection's start until the response was complete. */
  readonly atMs: number
}

export interface Closed {
  /** Milliseconds from the connection's start until it closed. */
  readonly atMs: number
  /** The socket error that ended it (ECONNRESET …), if any. */
  readonly error: string | undefined
}

const HEAD_END = Buffer.from("\r\n\r\n")

type Parsed = { readonly response: Omit<RawResponse, "atMs">; readonly rest: Buffer } | "incomplete"

const parseChunked = (buffer: Buffer): { body: Buffer; rest: Buffer } | "incomplete" => {
  const chunks: Array<Buffer> = []
  let offset = 0
  while (true) {
    const lineEnd = buffer.indexOf("\r\n", offset)
    if (lineEnd < 0) return "incomplete"
    const size = parseInt(buffer.subarray(offset, lineEnd).toString("latin1").split(";")[0] ?? "", 16)
    if (Number.isNaN(size)) throw new Error(`bad chunk size line: ${buffer.subarray(offset, lineEnd).toString("latin1")}`)
    const start = lineEnd + 2
    if (size === 0) {
      // No trailers expected from this server: the terminating CRLF follows.
      if (buffer.length < start + 2) return "incomplete"
      return { body: Buffer.concat(chunks), rest: buffer.subarray(start + 2) }
    }
    if (buffer.length < start + size + 2) return "incomplete"
    chunks.push(buffer.subarray(start, start + size))
    offset = start + size + 2
  }
}

/** One response off the front of `buffer`; `ended` says no more bytes will come. */
const parseResponse = (buffer: Buffer, ended: boolean): Parsed => {
  const headEnd = buffer.indexOf(HEAD_END)
  if (headEnd < 0) return "incomplete"
  const [statusLine = "", ...headerLines] = buffer.subarray(0, headEnd).toString("latin1").split("\r\n")
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)
  if (match === null) throw new Error(`not an HTTP response: ${JSON.stringify(statusLine)}`)
  const status = Number(match[1])
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(":")
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  const afterHead = buffer.subarray(headEnd + HEAD_END.length)
  let body: Buffer
  let rest: Buffer
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
    body = Buffer.alloc(0)
    rest = afterHead
  } else if (headers["content-length"] !== undefined) {
    const length = Number(headers["content-length"])
    if (afterHead.length < length) return "incomplete"
    body = afterHead.subarray(0, length)
    rest = afterHead.subarray(length)
  } else if ((headers["transfer-encoding"] ?? "").includes("chunked")) {
    const chunked = parseChunked(afterHead)
    if (chunked === "incomplete") return "incomplete"
    body = chunked.body
    rest = chunked.rest
  } else {
    // Delimited by the end of the connection.
    if (!ended) return "incomplete"
    body = afterHead
    rest = Buffer.alloc(0)
  }
  const text = body.toString("utf8")
  let json: unknown = undefined
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { response: { status, headers, body: text, json }, rest }
}

export class RawConnection {
  readonly socket: Socket
  readonly startedAt: number
  readonly responses: Array<RawResponse> = []
  /** Resolves once the connection is closed, for whatever reason. */
  readonly closed: Promise<Closed>
  #pending: Buffer = Buffer.alloc(0)
  #ended = false
  #closedAt: Closed | undefined
  readonly #listeners = new Set<() => void>()

  private constructor(socket: Socket, startedAt: number) {
    this.socket = socket
    this.startedAt = startedAt
    let error: string | undefined
    socket.on("data", (chunk: Buffer) => {
      this.#pending = Buffer.concat([this.#pending, chunk])
      this.#drain()
    })
    socket.on("end", () => {
      this.#ended = true
      this.#drain()
    })
    socket.on("error", (cause: NodeJS.ErrnoException) => {
      error = cause.code ?? cause.message
    })
    this.closed = new Promise((resolve) => {
      socket.once("close", () => {
        this.#ended = true
        this.#drain()
        this.#closedAt = { atMs: performance.now() - startedAt, error }
        this.#notify()
        resolve(this.#closedAt)
      })
    })
  }

  /** Opens a connection; rejects (e.g. ECONNREFUSED) if it cannot be made. */
  static open(port: number, host = "127.0.0.1"): Promise<RawConnection> {
    const startedAt = performance.now()
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host })
      socket.once("connect", () => {
        socket.off("error", reject)
        resolve(new RawConnection(socket, startedAt))
      })
      socket.once("error", reject)
    })
  }

  get isClosed(): boolean {
    return this.#closedAt !== undefined
  }

  /** Bytes received after the last complete response (a partial or unparseable one). */
  get leftover(): string {
    return this.#pending.toString("latin1")
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.write(data, (error) => error === undefined || error === null ? resolve() : reject(error))
    })
  }

  /** Resolves once `count` responses have arrived, or rejects when the connection closes first or time runs out. */
  waitForResponses(count: number, timeoutMs: number): Promise<Array<RawResponse>> {
    return this.#waitFor(
      () => this.responses.length >= count,
      timeoutMs,
      `${count} responses (have ${this.responses.length})`
    ).then(() => this.responses.slice(0, count))
  }

  /** Resolves with every response once the connection has closed; rejects if it is still open after `timeoutMs`. */
  async waitForClose(timeoutMs: number): Promise<{ responses: Array<RawResponse>; closed: Closed }> {
    await this.#waitFor(() => this.#closedAt !== undefined, timeoutMs, "the connection to close", false)
    return { responses: [...this.responses], closed: this.#closedAt as Closed }
  }

  destroy(): void {
    this.socket.destroy()
  }

  #drain(): void {
    while (true) {
      const parsed = parseResponse(this.#pending, this.#ended)
      if (parsed === "incomplete") break
      this.responses.push({ ...parsed.response, atMs: performance.now() - this.startedAt })
      this.#pending = parsed.rest
    }
    this.#notify()
  }

  #notify(): void {
    for (const listener of this.#listeners) listener()
  }

  #waitFor(predicate: () => boolean, timeoutMs: number, what: string, failOnClose = true): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (predicate()) return done(undefined)
        if (failOnClose && this.#closedAt !== undefined) {
          done(new Error(`connection closed before ${what}; leftover ${JSON.stringify(this.leftover.slice(0, 200))}`))
        }
      }
      const timer = setTimeout(() => done(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs)
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
}

/** A request as bytes; `Host` and, for a body, `Content-Length` are added. */
export const rawRequest = (
  method: string,
  path: string,
  options: { readonly headers?: Readonly<Record<string, string>>; readonly body?: string } = {}
): string => {
  const headers: Record<string, string> = { host: "localhost", ...options.headers }
  if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body))
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("")
  return `${method} ${path} HTTP/1.1\r\n${head}\r\n${options.body ?? ""}`
}

/** The documented Error body, with `status` equal to the HTTP status. */
export const isErrorBody = (response: RawResponse, code?: string): boolean => {
  const json = response.json as { code?: unknown; message?: unknown; status?: unknown } | undefined
  return typeof json === "object" && json !== null && typeof json.code === "string" &&
    typeof json.message === "string" && json.message !== "" && json.status === response.status &&
    Object.keys(json).sort().join(",") === "code,message,status" &&
    (response.headers["content-type"] ?? "").startsWith("application/json") &&
    (code === undefined || json.code === code)
}
