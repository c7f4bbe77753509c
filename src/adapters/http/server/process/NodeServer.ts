/**
 * The service's node:http server, served through @effect/platform-node's
 * NodeHttpServer, with what Node leaves to the application for a server facing
 * arbitrary clients:
 *
 * - **Timeouts as documented**: request headers within 10 s and the whole request
 *   within 30 s, checked every second (Node checks every 30 s by default, so a
 *   connection could outlive its bound by up to that much); idle keep-alive
 *   connections are closed after 65 s.
 * - **Answers from the moment the port opens.** NodeHttpServer listens before the
 *   application (and the store under it) is built and attaches its request handler
 *   only then; a request that arrives in between would get no answer at all. Until
 *   the handler is attached, `/healthz` answers 200 and everything else 503 with
 *   `Retry-After`.
 * - **The Error body for what Node answers itself**: parse errors (400), oversized or
 *   too many headers (431), timeouts (408), a missing `Host` (400), an unsupported
 *   `Expect` (417), CONNECT (400).
 * - **No error hides an earlier answer**: bytes Node cannot parse after a valid request
 *   on the same connection are answered only once the requests before them have been.
 * - **Pipelining is bounded**: one connection has at most a few requests in the
 *   application at once, so it cannot crowd out other connections; one that piles up
 *   more than a bounded queue is cut off once what it has in progress is answered.
 * - **One request log line for each of these answers too**, written by RequestTelemetry's
 *   `logRequest` (route `unmatched`; method and path `-` where Node could not parse them).
 * - **Shutdown stops new work at once** (on the server's `close`, which NodeHttpServer
 *   calls when its scope closes): no new connection is accepted, connections without
 *   an accepted request are closed, the last accepted response on each connection says
 *   `Connection: close`, requests arriving after that get 503, and the close completes
 *   as soon as the accepted requests are answered, or just after the grace period at the
 *   latest: the requests still running then are interrupted and answered 503, and that
 *   answer is given {@link ANSWER_AFTER_GRACE_MS} to get out.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Duration, Effect, Layer } from "effect"
import * as Http from "node:http"
import type { Socket } from "node:net"
import { ExpectationFailed, InvalidRequest, RequestHeaderFieldsTooLarge, ServiceUnavailable } from "../../api/ApiErrors.ts"
import * as ProtocolErrors from "./ProtocolErrors.ts"
import { SHUTTING_DOWN } from "../policies/ErrorResponses.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "../policies/RequestId.ts"
import * as RequestTelemetry from "../policies/RequestTelemetry.ts"
import { pathOf } from "../routing/RouteTable.ts"

/** Writes the log line of a request answered here, which arrived at `startedAt` (epoch ms). */
export type LogRequest = (line: RequestTelemetry.RequestLine, startedAt: number) => void

/** Longest a client may take to send its request headers. */
export const HEADERS_TIMEOUT_MS = 10_000
/** Longest a client may take to send its whole request, body included. */
export const REQUEST_TIMEOUT_MS = 30_000
/** How often the two bounds above are checked: a connection is cut at most this much late. */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000
/**
 * How long an idle keep-alive connection stays open. Longer than the usual 60 s idle
 * timeout of proxies and load balancers, so they close first and never reuse a
 * connection this server has just closed.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000
/** Largest request head (request line and headers) accepted. */
export const MAX_HEADER_BYTES = 16 * 1024
/** Most header fields accepted in one request. */
export const MAX_HEADERS = 100
/** Requests of one connection in the application at once; more pipelined ones wait. */
export const MAX_IN_PROGRESS_PER_CONNECTION = 8
/** Pipelined requests one connection may have waiting; beyond that it is cut off. */
export const MAX_WAITING_PER_CONNECTION = 128

/**
 * How long after a shutdown's grace period the connections still open are closed: the
 * requests still running at its end are interrupted and answered 503 by the application
 * (ErrorResponses), an answer that would be cut off if they were closed at the same moment.
 */
export const ANSWER_AFTER_GRACE_MS = 500

const CLOSE = { connection: "close" } as const
const RETRY_AFTER = { "retry-after": "1" } as const

type Event = "request" | "checkContinue"

/** A request Node has parsed, with the response it will write in its turn. */
interface Pending {
  readonly event: Event
  readonly request: Http.IncomingMessage
  readonly response: Http.ServerResponse
  /** When Node handed it over, epoch ms. */
  readonly arrivedAt: number
}

/** What the server knows of one client connection. */
class Connection {
  readonly socket: Socket
  /** Handed to the application and not answered yet, in arrival order. */
  readonly inProgress = new Set<Pending>()
  /** Parsed, held back by {@link MAX_IN_PROGRESS_PER_CONNECTION}, in arrival order. */
  readonly waiting: Array<Pending> = []
  /** A protocol error to answer once the requests before it are answered. */
  failure: ProtocolErrors.ErrorBody | undefined
  /** When that error came, epoch ms. */
  failedAt = 0
  /** No further request is taken; the connection ends once those in progress are answered. */
  cut = false
  /** Ending: nothing more is written. */
  ending = false

  constructor(socket: Socket) {
    this.socket = socket
  }

  get accepted(): Array<Pending> {
    return [...this.inProgress, ...this.waiting]
  }

  /**
   * Reads nothing more from the client: what it still sends would only be parsed into
   * requests that are never taken, at the cost of everyone else's event loop. Node
   * resumes a socket by itself when a response finishes; that is undone in the same tick,
   * before any read.
   */
  stopReading(): void {
    this.socket.on("resume", () => this.socket.pause())
    this.socket.pause()
  }
}

const isHealthCheck = (request: Http.IncomingMessage) =>
  request.method === "GET" && (request.url ?? "").split("?")[0] === "/healthz"

/** A node:http server with the connection policy described in this module's header. */
export class ServiceServer extends Http.Server {
  readonly #connections = new Map<Socket, Connection>()
  readonly #shutdownTimeoutMs: number
  readonly #logRequest: LogRequest | undefined
  #draining = false
  /** Requests accepted before the shutdown began and answered after it. */
  #drained = 0

  constructor(shutdownTimeoutMs: number, onDrained?: (requests: number) => void, logRequest?: LogRequest) {
    super({
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      maxHeaderSize: MAX_HEADER_BYTES,
      // Checked here instead, so that the 400 carries the Error body.
      requireHostHeader: false,
      // The service speaks plain HTTP/1.1 (no WebSocket, no h2c): an Upgrade header is
      // ignored, so that every request passes through the policy here.
      shouldUpgradeCallback: () => false
    })
    this.#shutdownTimeoutMs = shutdownTimeoutMs
    this.#logRequest = logRequest
    // Closed: every connection is gone, so every drained request is counted.
    if (onDrained !== undefined) this.once("close", () => onDrained(this.#drained))
    // Node keeps the first maxHeadersCount fields and drops the rest silently: one more
    // than the limit makes a request over it recognisable.
    this.maxHeadersCount = MAX_HEADERS + 1
    this.on("connection", (socket: Socket) => {
      this.#connections.set(socket, new Connection(socket))
      socket.once("close", () => this.#connections.delete(socket))
    })
    this.on("clientError", (error: Error, socket: Socket) => this.#onClientError(error, socket))
    this.on("checkExpectation", (_request: Http.IncomingMessage, response: Http.ServerResponse) =>
      this.#send(response, new ExpectationFailed({ message: "only Expect: 100-continue is supported" }), CLOSE))
    // A CONNECT request names a host to tunnel to, not a resource of this service.
    this.on("connect", (request: Http.IncomingMessage, socket: Socket) => {
      const arrivedAt = Date.now()
      const error = new InvalidRequest({ message: "the CONNECT method is not supported" })
      this.#log(request.method ?? "-", request.url ?? "-", error, ProtocolErrors.sendOnSocket(socket, error), arrivedAt)
    })
  }

  // Node emits each parsed request here; the policy decides when (and whether) the
  // application's listener sees it.
  override emit(event: string, ...args: Array<any>): boolean {
    if (event === "request" || event === "checkContinue") {
      this.#arrive({ event, request: args[0], response: args[1], arrivedAt: Date.now() })
      return true
    }
    return super.emit(event, ...args)
  }

  // Stop listening first: a client that sees its idle connection closed and reconnects at
  // once must be refused, not accepted into the backlog and reset when it is closed.
  override close(callback?: (error?: Error) => void): this {
    super.close(callback)
    this.#drain()
    return this
  }

  #arrive(pending: Pending): void {
    const connection = this.#connections.get(pending.request.socket)
    pending.response.once("close", () => this.#answered(connection, pending))
    // After bad bytes or a cut-off nothing more is taken or answered: the request goes
    // when the connection ends.
    if (connection !== undefined && (connection.failure !== undefined || connection.cut)) return
    if (this.#answeredHere(pending)) {
      // Its answer may still be queued behind earlier ones: a later error must wait for it.
      connection?.inProgress.add(pending)
      return
    }
    if (connection === undefined) return this.#dispatch(pending)
    connection.waiting.push(pending)
    if (connection.waiting.length > MAX_WAITING_PER_CONNECTION) {
      connection.cut = true
      connection.waiting.length = 0
      connection.stopReading()
    }
    this.#advance(connection)
  }

  /** The request line of an answer given here. */
  #log(
    method: string,
    url: string,
    answer: { readonly status: number; readonly code?: string; readonly message?: string },
    requestId: string,
    arrivedAt: number
  ): void {
    this.#logRequest?.({
      method,
      path: pathOf(url),
      status: answer.status,
      route: RequestTelemetry.UNMATCHED,
      requestId,
      error: answer.status < 500 ? undefined : { type: answer.code ?? "unknown", message: answer.message ?? "(no message)" }
    }, arrivedAt)
  }

  /** ProtocolErrors.send, and the request's log line. */
  #send(
    response: Http.ServerResponse,
    error: ProtocolErrors.ErrorBody,
    headers?: Readonly<Record<string, string>>,
    arrivedAt = Date.now()
  ): void {
    const requestId = ProtocolErrors.send(response, error, headers)
    this.#log(response.req.method ?? "-", response.req.url ?? "-", error, requestId, arrivedAt)
  }

  /** Answers what the application must not or cannot take; true when it did. */
  #answeredHere({ arrivedAt, request, response }: Pending): boolean {
    if (request.rawHeaders.length / 2 > MAX_HEADERS) {
      this.#send(
        response,
        new RequestHeaderFieldsTooLarge({ message: `the request has more than ${MAX_HEADERS} header fields` }),
        CLOSE,
        arrivedAt
      )
    } else if (request.httpVersion === "1.1" && request.headers.host === undefined) {
      this.#send(response, new InvalidRequest({ message: "the Host header is missing" }), CLOSE, arrivedAt)
    } else if (this.#draining) {
      this.#send(
        response,
        SHUTTING_DOWN.error,
        SHUTTING_DOWN.headers,
        arrivedAt
      )
    } else if (this.listenerCount("request") === 0) {
      // The application is not attached yet: the store is still starting. Liveness is
      // the process answering, as /healthz always says.
      if (isHealthCheck(request)) {
        const requestId = requestIdFor(request.headers[REQUEST_ID_HEADER])
        response.writeHead(200, { "content-type": "application/json", [REQUEST_ID_HEADER]: requestId })
          .end(JSON.stringify({ status: "ok" }))
        this.#log(request.method ?? "-", request.url ?? "-", { status: 200 }, requestId, arrivedAt)
      } else {
        this.#send(
          response,
          new ServiceUnavailable({ message: "the service is starting; retry" }),
          RETRY_AFTER,
          arrivedAt
        )
      }
    } else {
      return false
    }
    return true
  }

  #dispatch(pending: Pending): void {
    if (!super.emit(pending.event, pending.request, pending.response)) {
      // The application detached meanwhile (the end of a shutdown).
      this.#send(
        pending.response,
        SHUTTING_DOWN.error,
        SHUTTING_DOWN.headers,
        pending.arrivedAt
      )
    }
  }

  #answered(connection: Connection | undefined, pending: Pending): void {
    if (connection === undefined) return
    connection.inProgress.delete(pending)
    const index = connection.waiting.indexOf(pending)
    if (index >= 0) connection.waiting.splice(index, 1)
    this.#advance(connection)
  }

  /** Hands waiting requests to the application within the bound, then ends the connection if its work is done. */
  #advance(connection: Connection): void {
    while (!connection.cut && connection.inProgress.size < MAX_IN_PROGRESS_PER_CONNECTION) {
      const next = connection.waiting.shift()
      if (next === undefined) break
      // After a parse error, a request whose body never arrived in full cannot complete.
      if (connection.failure !== undefined && !next.request.complete) continue
      connection.inProgress.add(next)
      this.#dispatch(next)
    }
    if (connection.ending) return
    if (connection.failure !== undefined) {
      // A request whose body the bad bytes cut short is the last one: it gets the error.
      const inProgress = [...connection.inProgress]
      if (connection.waiting.length > 0 || inProgress.some((pending) => pending.request.complete)) return
      connection.ending = true
      const stuck = inProgress[0]
      if (stuck === undefined || !stuck.response.headersSent) {
        const requestId = ProtocolErrors.sendOnSocket(connection.socket, connection.failure)
        // Node could not parse the request, so neither its method nor its path is known.
        this.#log("-", "-", connection.failure, requestId, connection.failedAt)
      } else {
        connection.socket.destroy()
      }
    } else if ((connection.cut || this.#draining) && connection.inProgress.size === 0 && connection.waiting.length === 0) {
      connection.ending = true
      ProtocolErrors.endSoon(connection.socket)
    }
  }

  #onClientError(error: Error, socket: Socket): void {
    const connection = this.#connections.get(socket)
    // Further errors on a connection already being answered (Node keeps parsing) change nothing.
    if (connection !== undefined && (connection.failure !== undefined || connection.ending)) return
    const failure = ProtocolErrors.fromClientError(error, `${MAX_HEADER_BYTES} bytes`)
    if (connection === undefined || failure === undefined || !socket.writable) {
      socket.destroy()
      return
    }
    connection.failure = failure
    connection.failedAt = Date.now()
    this.#advance(connection)
  }

  #drain(): void {
    if (this.#draining) return
    this.#draining = true
    for (const connection of this.#connections.values()) {
      for (const pending of connection.accepted) pending.response.once("finish", () => this.#drained++)
      const last = connection.accepted.at(-1)
      if (last === undefined) {
        // Idle, or a request still arriving: nothing was accepted on it.
        connection.ending = true
        connection.socket.destroy()
      } else if (!last.response.headersSent) {
        last.response.setHeader("connection", "close")
      } else if (last.request.headers.accept?.includes("text/event-stream") === true) {
        // An event stream (its answer begun) never finishes on its own: it would hold the
        // drain to its end.
        // Closed once what was written is sent; its handler is interrupted as for a client
        // that left, and the client resumes elsewhere with Last-Event-ID.
        connection.ending = true
        connection.socket.destroySoon()
      }
    }
    setTimeout(() => {
      for (const connection of this.#connections.values()) connection.socket.destroy()
    }, this.#shutdownTimeoutMs + ANSWER_AFTER_GRACE_MS).unref()
  }
}

export interface Options {
  readonly port: number
  readonly host: string
  /** Longest a shutdown waits for accepted requests before closing their connections. */
  readonly shutdownTimeout: Duration.Duration
  /** Told, once the server has closed, how many accepted requests the shutdown answered. */
  readonly onDrained?: ((requests: number) => void) | undefined
}

/**
 * The HttpServer (and Node's HTTP platform services) on a {@link ServiceServer}, whose own
 * answers are logged with the logger of the layer's builder.
 */
export const layer = (options: Options) =>
  Layer.unwrap(Effect.map(Effect.context<never>(), (context) => {
    const log = Effect.runForkWith(context)
    const logRequest: LogRequest = (line, startedAt) => void log(RequestTelemetry.logRequestSince(line, startedAt))
    return NodeHttpServer.layer(
      () => new ServiceServer(Duration.toMillis(options.shutdownTimeout), options.onDrained, logRequest),
      { port: options.port, host: options.host, gracefulShutdownTimeout: options.shutdownTimeout }
    )
  }))
