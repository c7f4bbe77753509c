/**
 * Direct tests of the PGlite wire-protocol bridge: session hand-over between
 * connections, the untyped packets before startup, malformed input,
 * `Terminate`, and batched (pipelined) messages. PGlite runs on its own thread
 * (`PgliteThread`), as in the service. Clients are @effect/sql-pg's own
 * `PgConnection`/`PgClient`; where a client would never send the bytes in
 * question, a raw `Duplex` from `makePgliteStream` speaks the protocol.
 */
import { PgClient, PgConnection } from "@effect/sql-pg"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Redacted, Result, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlError } from "effect/sql"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Duplex } from "node:stream"
import { makePgliteStream } from "../../../src/adapters/embedded/PgliteBridge.ts"
import * as PgliteThread from "../../../src/adapters/embedded/PgliteThread.ts"

// -----------------------------------------------------------------------------
// One database thread for the whole file
// -----------------------------------------------------------------------------

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-bridge-"))
let thread: PgliteThread.PgliteThread
let bridge: () => Duplex
/** Every batch the bridge handed to PGlite, oldest first. */
const exchanges: Array<Uint8Array> = []
/** Every stream the clients opened, oldest first. */
const streams: Array<Duplex> = []

const openStream = (): Duplex => {
  const duplex = bridge()
  streams.push(duplex)
  return duplex
}

beforeAll(async () => {
  thread = await PgliteThread.open(dataDir)
  await thread.exchange(simpleQuery("CREATE TABLE bridge_animals (id serial PRIMARY KEY, name text NOT NULL)"))
  bridge = makePgliteStream({
    exchange: (messages, onReply) => {
      exchanges.push(Buffer.from(messages))
      return thread.exchange(messages, onReply)
    }
  })
})

afterAll(async () => {
  for (const stream of streams) stream.destroy()
  await thread?.close()
  Fs.rmSync(dataDir, { recursive: true, force: true })
})

// -----------------------------------------------------------------------------
// Client helpers
// -----------------------------------------------------------------------------

const connectionOptions = (extra: Partial<PgConnection.Config> = {}): PgConnection.Config => ({
  stream: openStream,
  username: "postgres",
  database: "postgres",
  ...extra
})

/**
 * A scope to close mid-test, itself closed with the test's scope should the
 * test fail first (so no connection keeps the session from later tests).
 */
const childScope = Effect.flatMap(Scope.Scope, (parent) => Scope.fork(parent))

/** Opens a `PgConnection` in `scope` and returns it with the stream it runs on. */
const openConnection = (scope: Scope.Scope, extra: Partial<PgConnection.Config> = {}) =>
  Effect.gen(function*() {
    const before = streams.length
    const connection = yield* PgConnection.make(connectionOptions(extra)).pipe(Scope.provide(scope))
    const stream = streams[before]
    assert.isDefined(stream, "the connection opened a stream")
    return { connection, stream }
  })

const countNamed = (connection: PgConnection.PgConnection, name: string) =>
  Effect.map(
    connection.query("SELECT count(*)::int AS n FROM bridge_animals WHERE name = $1", [name]),
    (result) => result.rows[0]?.["n"]
  )

const insertNamed = (connection: PgConnection.PgConnection, name: string) =>
  connection.query("INSERT INTO bridge_animals (name) VALUES ($1)", [name])

/** Runs `use` on a fresh single-connection PgClient over the bridge. */
const withClient = <A, E>(
  use: (sql: PgClient.PgClient) => Effect.Effect<A, E>,
  extra: Partial<PgClient.PgClientConfig> = {}
) =>
  PgClient.makeClient({ stream: openStream, username: "postgres", database: "postgres", ...extra }).pipe(
    Effect.flatMap(use),
    Effect.scoped,
    Effect.provide(Reactivity.layer)
  )

/** A new connection gets the session (within the connect timeout) and answers. */
const freshClientAnswers = withClient((sql) => sql<{ readonly one: number }>`SELECT 1::int AS one`).pipe(
  Effect.map((rows) => rows[0]?.one)
)

/** PGlite itself still answers a query sent past the bridge (a backend that died answers nothing). */
const pgliteAnswers = Effect.promise(() => thread.exchange(simpleQuery("SELECT 1::int AS one"))).pipe(
  Effect.map((reply) =>
    parseBackend(Buffer.from(reply)).filter((message) => message.type === "D").map((row) => dataRowValues(row.body))
  )
)

const causeMessage = (error: SqlError.SqlError): string =>
  error.reason.cause instanceof Error ? error.reason.cause.message : String(error.reason.cause)

// -----------------------------------------------------------------------------
// Raw protocol helpers
// -----------------------------------------------------------------------------

const protocolVersion3 = 196608
const sslRequestCode = 80877103
const gssEncRequestCode = 80877104
const cancelRequestCode = 80877102

const untypedPacket = (code: number, body: Buffer = Buffer.alloc(0)): Buffer => {
  const header = Buffer.alloc(8)
  header.writeInt32BE(8 + body.length, 0)
  header.writeInt32BE(code, 4)
  return Buffer.concat([header, body])
}

const startupPacket = untypedPacket(protocolVersion3, Buffer.from("user\0postgres\0database\0postgres\0\0", "latin1"))

const frontendMessage = (type: string, body: Buffer = Buffer.alloc(0)): Buffer => {
  const header = Buffer.alloc(5)
  header.write(type, 0, "latin1")
  header.writeInt32BE(4 + body.length, 1)
  return Buffer.concat([header, body])
}

const simpleQuery = (sql: string): Buffer => frontendMessage("Q", Buffer.from(`${sql}\0`, "utf8"))
const terminate = frontendMessage("X")

interface BackendMessage {
  readonly type: string
  readonly body: Buffer
}

const parseBackend = (bytes: Buffer): Array<BackendMessage> => {
  const messages: Array<BackendMessage> = []
  let offset = 0
  while (bytes.length - offset >= 5) {
    const length = bytes.readInt32BE(offset + 1)
    if (bytes.length - offset < 1 + length) break
    messages.push({
      type: String.fromCharCode(bytes.readUInt8(offset)),
      body: bytes.subarray(offset + 5, offset + 1 + length)
    })
    offset += 1 + length
  }
  return messages
}

/** The text values of a `DataRow` body. */
const dataRowValues = (body: Buffer): Array<string | null> => {
  const values: Array<string | null> = []
  let offset = 2
  for (let column = 0; column < body.readInt16BE(0); column++) {
    const length = body.readInt32BE(offset)
    offset += 4
    if (length < 0) {
      values.push(null)
    } else {
      values.push(body.toString("utf8", offset, offset + length))
      offset += length
    }
  }
  return values
}

/**
 * A protocol-speaking peer on a raw bridge stream, recording what comes back;
 * the stream is destroyed with the test's scope.
 */
const openRaw = Effect.acquireRelease(
  Effect.sync(() => rawPeer()),
  (raw) => Effect.sync(() => raw.state.duplex.destroy())
)

const rawPeer = () => {
  const duplex = openStream()
  const state = {
    duplex,
    received: Buffer.alloc(0),
    error: undefined as Error | undefined,
    ended: false,
    closed: false
  }
  const waiters = new Set<() => void>()
  const notify = () => {
    for (const waiter of waiters) waiter()
  }
  duplex.on("data", (chunk: Buffer) => {
    state.received = Buffer.concat([state.received, chunk])
    notify()
  })
  duplex.on("error", (error) => {
    state.error = error
    notify()
  })
  duplex.on("end", () => {
    state.ended = true
    notify()
  })
  duplex.on("close", () => {
    state.closed = true
    notify()
  })

  /** Waits until `done()` holds, failing the test after `millis`. */
  const until = (what: string, done: () => boolean, millis = 5_000) =>
    Effect.callback<void, Error>((resume) => {
      const check = () => {
        if (!done()) return
        cleanup()
        resume(Effect.void)
      }
      const timer = setTimeout(() => {
        cleanup()
        resume(Effect.fail(new Error(`Timed out waiting for ${what}`)))
      }, millis)
      const cleanup = () => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      waiters.add(check)
      check()
      return Effect.sync(cleanup)
    }).pipe(Effect.orDie)

  /** Writes and waits for the stream to accept (or refuse) the bytes. */
  const write = (bytes: Buffer) =>
    Effect.callback<void>((resume) => {
      duplex.write(bytes, () => resume(Effect.void))
    }).pipe(Effect.timeoutOrElse({
      duration: "5 seconds",
      orElse: () => Effect.die(new Error("Timed out waiting for the bridge to take a write"))
    }))

  const messages = () => parseBackend(state.received)
  /**
   * What came after the startup reply (which ends with the first
   * ReadyForQuery), less the ParameterStatus reports a server may add anywhere.
   */
  const replies = () => {
    const all = messages()
    return all.slice(all.findIndex((message) => message.type === "Z") + 1).filter((message) => message.type !== "S")
  }
  const readyCount = () => messages().filter((message) => message.type === "Z").length
  const untilReady = (count: number) => until(`ReadyForQuery #${count}`, () => readyCount() >= count)

  return { state, until, write, messages, replies, readyCount, untilReady }
}

// -----------------------------------------------------------------------------
// Tests
// -----------------------------------------------------------------------------

describe("PgliteBridge session hand-over", () => {
  const leaveWays = [
    { how: "its stream is destroyed", leave: (stream: Duplex) => Effect.sync(() => stream.destroy()) },
    { how: "its stream is ended without Terminate", leave: (stream: Duplex) => Effect.sync(() => stream.end()) },
    // Closing a PgConnection's scope sends Terminate ('X') and ends the stream.
    { how: "it sends Terminate", leave: (_: Duplex) => Effect.void }
  ] as const

  for (const [index, { how, leave }] of leaveWays.entries()) {
    it.live(`resets the session when a connection inside a transaction leaves because ${how}`, () =>
      Effect.gen(function*() {
        const abandoned = `abandoned ${index}`
        const afterwards = `autocommitted ${index}`

        const firstScope = yield* childScope
        const { connection: first, stream } = yield* openConnection(firstScope)
        // Session state that neither COMMIT nor ROLLBACK removes.
        yield* first.query("SET statement_timeout = '4321ms'")
        yield* first.query("CREATE TEMP TABLE leftover_temp (x int)")
        yield* first.query("PREPARE leftover_statement AS SELECT 1")
        yield* first.query("BEGIN")
        yield* insertNamed(first, abandoned)
        assert.strictEqual(yield* countNamed(first, abandoned), 1)
        yield* leave(stream)
        yield* Scope.close(firstScope, Exit.void)

        // Unnamed statements only, so pg_prepared_statements lists leftovers alone.
        const secondScope = yield* childScope
        const { connection: second } = yield* openConnection(secondScope, { prepare: false })
        assert.strictEqual(yield* countNamed(second, abandoned), 0, "the abandoned transaction was rolled back")
        const prepared = yield* second.query("SELECT name FROM pg_prepared_statements")
        assert.deepStrictEqual(prepared.rows, [], "prepared statements were deallocated")
        const timeout = yield* second.query("SHOW statement_timeout")
        assert.strictEqual(timeout.rows[0]?.["statement_timeout"], "0", "session settings were reset")
        const temp = yield* second.query("SELECT count(*)::int AS n FROM pg_class WHERE relname = 'leftover_temp'")
        assert.strictEqual(temp.rows[0]?.["n"], 0, "temp tables were dropped")
        // Autocommit: the row must survive this connection's own reset, which rolls back.
        yield* insertNamed(second, afterwards)
        yield* Scope.close(secondScope, Exit.void)

        const thirdScope = yield* childScope
        const { connection: third } = yield* openConnection(thirdScope)
        assert.strictEqual(yield* countNamed(third, afterwards), 1, "the second connection was not in a transaction")
        assert.strictEqual(yield* countNamed(third, abandoned), 0)
        yield* Scope.close(thirdScope, Exit.void)
      }))
  }

  it.live("resets a session left in a failed transaction and an unsynced extended-query cycle", () =>
    Effect.gen(function*() {
      const raw = yield* openRaw
      yield* raw.write(startupPacket)
      yield* raw.untilReady(1)
      yield* raw.write(simpleQuery("BEGIN; INSERT INTO bridge_animals (name) VALUES ('failed tx'); SELECT 1/0"))
      yield* raw.untilReady(2)
      // A Parse that fails, with no Sync: the backend now discards everything until one.
      const parse = frontendMessage("P", Buffer.from("\0SELEKT broken\0\0\0", "latin1"))
      yield* raw.write(parse)
      const parseFailed = () =>
        raw.messages().some((message) => message.type === "E" && message.body.includes("SELEKT"))
      yield* raw.until("the parse error", parseFailed)
      raw.state.duplex.destroy()

      const scope = yield* childScope
      const { connection } = yield* openConnection(scope)
      assert.strictEqual(yield* countNamed(connection, "failed tx"), 0)
      const answer = yield* connection.query("SELECT 2::int AS two")
      assert.deepStrictEqual(answer.rows, [{ two: 2 }])
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("makes a second connection wait for the first to close, without touching its transaction", () =>
    Effect.gen(function*() {
      const firstScope = yield* childScope
      const { connection: first } = yield* openConnection(firstScope)
      yield* first.query("BEGIN")
      yield* insertNamed(first, "held by first")

      const second = yield* Effect.forkChild(Effect.scoped(Effect.gen(function*() {
        const { connection } = yield* openConnection(yield* Scope.Scope)
        return {
          held: yield* countNamed(connection, "held by first"),
          committed: yield* countNamed(connection, "committed by first")
        }
      })))
      yield* Effect.sleep("300 millis")
      assert.isUndefined(second.pollUnsafe(), "the second connection is still waiting for the session")

      // The first connection's transaction is intact and still its own.
      assert.strictEqual(yield* countNamed(first, "held by first"), 1)
      yield* first.query("ROLLBACK")
      yield* insertNamed(first, "committed by first")
      yield* Scope.close(firstScope, Exit.void)

      const seen = yield* Fiber.join(second).pipe(Effect.timeout("5 seconds"))
      assert.deepStrictEqual(seen, { held: 0, committed: 1 })
    }))

  it.live("lets a connection that gives up while queued pass the session on, in turn", () =>
    Effect.gen(function*() {
      const firstScope = yield* childScope
      const { connection: first } = yield* openConnection(firstScope)
      yield* first.query("BEGIN")
      yield* insertNamed(first, "held past a timeout")
      const gaveUp = yield* Effect.scoped(Effect.gen(function*() {
        return yield* openConnection(yield* Scope.Scope, { connectTimeout: "200 millis" })
      })).pipe(Effect.flip)
      assert.strictEqual(gaveUp.reason.message, "PgConnection: Connection timed out")

      // The one that gave up neither reset the first's session nor let the next one in.
      const third = yield* Effect.forkChild(Effect.scoped(Effect.gen(function*() {
        const { connection } = yield* openConnection(yield* Scope.Scope)
        return yield* countNamed(connection, "held past a timeout")
      })))
      yield* Effect.sleep("150 millis")
      assert.isUndefined(third.pollUnsafe(), "the third connection is still waiting for the session")
      assert.strictEqual(yield* countNamed(first, "held past a timeout"), 1)
      yield* first.query("COMMIT")
      yield* Scope.close(firstScope, Exit.void)
      assert.strictEqual(yield* Fiber.join(third).pipe(Effect.timeout("5 seconds")), 1)
    }))
})

describe("PgliteBridge before startup", () => {
  it.live("answers a client's SSLRequest (sslmode=prefer) with N and goes on in plaintext", () =>
    Effect.gen(function*() {
      const firstReplies: Array<Buffer> = []
      const recording = (): Duplex => {
        const duplex = openStream()
        duplex.once("data", (chunk: Buffer) => firstReplies.push(Buffer.from(chunk)))
        return duplex
      }
      const rows = yield* withClient(
        (sql) => sql<{ readonly answer: number }>`SELECT 41 + ${1}::int AS answer`,
        { url: Redacted.make("postgres://postgres@localhost/postgres?sslmode=prefer"), stream: recording }
      )
      assert.deepStrictEqual(rows, [{ answer: 42 }])
      assert.deepStrictEqual(firstReplies, [Buffer.from("N")], "the client sent an SSLRequest and was refused")
      assert.deepStrictEqual(yield* pgliteAnswers, [["1"]], "PGlite survived the SSLRequest")

      // Without a URL sql-pg skips the SSLRequest: the first reply is AuthenticationOk.
      firstReplies.length = 0
      yield* withClient((sql) => sql`SELECT 1`, { stream: recording })
      assert.strictEqual(firstReplies[0]?.toString("latin1", 0, 1), "R")
    }))

  it.live("fails a client that requires TLS (sslmode=require) without harming the next one", () =>
    Effect.gen(function*() {
      const refused = yield* withClient(
        (sql) => sql`SELECT 1`,
        { url: Redacted.make("postgres://postgres@localhost/postgres?sslmode=require") }
      ).pipe(Effect.flip)
      assert.strictEqual(refused.reason.message, "PgConnection: Server refused TLS")
      assert.strictEqual(yield* freshClientAnswers, 1)
      assert.deepStrictEqual(yield* pgliteAnswers, [["1"]])
    }))

  it.live("refuses GSSENCRequest and SSLRequest on one stream, then accepts its startup", () =>
    Effect.gen(function*() {
      const raw = yield* openRaw
      yield* raw.write(untypedPacket(gssEncRequestCode))
      yield* raw.until("the GSS reply", () => raw.state.received.length >= 1)
      yield* raw.write(untypedPacket(sslRequestCode))
      yield* raw.until("the SSL reply", () => raw.state.received.length >= 2)
      assert.strictEqual(raw.state.received.toString("latin1"), "NN")
      raw.state.received = Buffer.alloc(0)
      yield* raw.write(startupPacket)
      yield* raw.untilReady(1)
      yield* raw.write(Buffer.concat([simpleQuery("SELECT 'after two refusals' AS s"), terminate]))
      yield* raw.until("end", () => raw.state.ended)
      const row = raw.messages().find((message) => message.type === "D")
      assert.isDefined(row)
      assert.deepStrictEqual(dataRowValues(row.body), ["after two refusals"])
      assert.deepStrictEqual(yield* pgliteAnswers, [["1"]])
    }))

  it.live("closes a CancelRequest's stream at once, even while another connection holds the session", () =>
    Effect.gen(function*() {
      const scope = yield* childScope
      const { connection } = yield* openConnection(scope)
      yield* connection.query("BEGIN")
      // sql-pg sends the CancelRequest on a new stream and waits for it to close
      // (giving up after 5 s); a cancel queued behind the session would hang.
      const opened = streams.length
      const started = Date.now()
      yield* connection.interrupt
      assert.isBelow(Date.now() - started, 2_000)
      assert.strictEqual(streams.length, opened + 1, "the cancel went out on a stream of its own")
      assert.isTrue(streams[opened]?.destroyed)
      const raw = yield* openRaw
      yield* raw.write(untypedPacket(cancelRequestCode, Buffer.alloc(8)))
      yield* raw.until("close", () => raw.state.closed, 2_000)
      assert.strictEqual(raw.state.received.length, 0)
      assert.isUndefined(raw.state.error)
      // The cancel touched nothing: the transaction is still open.
      const inTransaction = yield* connection.query("SELECT now() = statement_timestamp() AS fresh")
      assert.deepStrictEqual(inTransaction.rows, [{ fresh: false }])
      yield* connection.query("ROLLBACK")
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("keeps the startup reply intact when the client reads it after PGlite has run more", () =>
    Effect.gen(function*() {
      // No 'data' listener: the reply waits in the stream's buffer, unread.
      const duplex = yield* Effect.acquireRelease(
        Effect.sync(openStream),
        (duplex) => Effect.sync(() => duplex.destroy())
      )
      yield* Effect.callback<void>((resume) => {
        duplex.write(startupPacket, () => resume(Effect.void))
      })
      assert.isAbove(duplex.readableLength, 0)
      // PGlite reuses its receive buffer for the next protocol exchange.
      yield* Effect.promise(() => thread.exchange(simpleQuery("SELECT repeat('z', 2000) AS filler")))
      const reply = duplex.read() as Buffer | null
      assert.isNotNull(reply)
      if (reply === null) return
      const messages = parseBackend(reply)
      assert.strictEqual(messages[0]?.type, "R")
      assert.strictEqual(messages.at(-1)?.type, "Z")
      assert.include(reply.toString("latin1"), "server_version")
      assert.notInclude(reply.toString("latin1"), "zzzz")
    }))

  it.live("holds a startup packet split across writes until it is whole", () =>
    Effect.gen(function*() {
      const raw = yield* openRaw
      for (const byte of startupPacket) yield* raw.write(Buffer.from([byte]))
      yield* raw.untilReady(1)
      yield* raw.write(terminate)
      yield* raw.until("end", () => raw.state.ended)
      assert.isUndefined(raw.state.error)
    }))
})

describe("PgliteBridge on malformed input", () => {
  const bogusStartups = [
    { what: "text that is not PostgreSQL", bytes: Buffer.from("GET / HTTP/1.1\r\n\r\n"), length: 1195725856 },
    { what: "a negative length", bytes: Buffer.from([0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0]), length: -16 },
    { what: "a length shorter than a packet header", bytes: Buffer.from([0, 0, 0, 4, 0, 0, 0, 0]), length: 4 },
    {
      what: "a length beyond PostgreSQL's bound",
      bytes: untypedPacket(protocolVersion3).fill(0x7f, 0, 2),
      length: 0x7f7f0008
    }
  ] as const

  for (const { what, bytes, length } of bogusStartups) {
    it.live(`errors only the stream whose startup packet has ${what}`, () =>
      Effect.gen(function*() {
        // A proper client holds the session throughout.
        const scope = yield* childScope
        const { connection } = yield* openConnection(scope)
        yield* connection.query("BEGIN")
        yield* insertNamed(connection, `beside ${what}`)

        const raw = yield* openRaw
        yield* raw.write(bytes)
        yield* raw.until("the stream's error", () => raw.state.error !== undefined, 2_000)
        assert.strictEqual(raw.state.error?.message, `PgliteBridge: invalid startup packet length ${length}`)
        assert.strictEqual(raw.state.received.length, 0)

        assert.strictEqual(yield* countNamed(connection, `beside ${what}`), 1, "the other connection is untouched")
        yield* connection.query("COMMIT")
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual(yield* freshClientAnswers, 1)
        assert.deepStrictEqual(yield* pgliteAnswers, [["1"]])
      }))
  }

  // PGlite itself aborts on these (and stays broken for every later connection), so the
  // bridge must refuse them as PostgreSQL would.
  const refusedStartups = [
    {
      what: "protocol version 2",
      bytes: untypedPacket(0x00020000, Buffer.from("user\0postgres\0\0", "latin1")),
      message: "PgliteBridge: unsupported protocol version 2.0"
    },
    {
      what: "an unknown request code",
      bytes: untypedPacket(1234, Buffer.from("user\0postgres\0\0", "latin1")),
      message: "PgliteBridge: unsupported protocol version 0.1234"
    },
    {
      what: "no user",
      bytes: untypedPacket(protocolVersion3, Buffer.from("database\0postgres\0\0", "latin1")),
      message: "PgliteBridge: startup packet names no user"
    },
    {
      what: "unterminated parameters",
      bytes: untypedPacket(protocolVersion3, Buffer.from("user\0postgres", "latin1")),
      message: "PgliteBridge: startup parameters are not terminated"
    }
  ] as const

  for (const { bytes, message, what } of refusedStartups) {
    it.live(`refuses a startup packet with ${what}, and PGlite keeps serving`, () =>
      Effect.gen(function*() {
        const raw = yield* openRaw
        yield* raw.write(bytes)
        yield* raw.until("the stream's error", () => raw.state.error !== undefined, 2_000)
        assert.strictEqual(raw.state.error?.message, message)
        assert.strictEqual(raw.state.received.length, 0)
        assert.strictEqual(yield* freshClientAnswers, 1)
        assert.deepStrictEqual(yield* pgliteAnswers, [["1"]])
      }))
  }

  it.live("refuses a message type no frontend sends, without handing it to PGlite", () =>
    Effect.gen(function*() {
      const raw = yield* openRaw
      yield* raw.write(startupPacket)
      yield* raw.untilReady(1)
      // PGlite loops forever on this one, freezing the process.
      yield* raw.write(frontendMessage("W", Buffer.from("xx", "latin1")))
      yield* raw.until("the stream's error", () => raw.state.error !== undefined, 2_000)
      assert.strictEqual(raw.state.error?.message, "PgliteBridge: unsupported message type 0x57")
      assert.strictEqual(yield* freshClientAnswers, 1)
      assert.deepStrictEqual(yield* pgliteAnswers, [["1"]])
    }))

  it.live("errors a stream that sends a malformed message after startup, and releases its session", () =>
    Effect.gen(function*() {
      const raw = yield* openRaw
      yield* raw.write(startupPacket)
      yield* raw.untilReady(1)
      yield* raw.write(simpleQuery("BEGIN; INSERT INTO bridge_animals (name) VALUES ('before bad length')"))
      yield* raw.untilReady(2)
      yield* raw.write(Buffer.from([0x51, 0, 0, 0, 2]))
      yield* raw.until("the stream's error", () => raw.state.error !== undefined, 2_000)
      assert.strictEqual(raw.state.error?.message, "PgliteBridge: invalid message length 2")

      const scope = yield* childScope
      const { connection } = yield* openConnection(scope, { connectTimeout: "3 seconds" })
      assert.strictEqual(yield* countNamed(connection, "before bad length"), 0)
      yield* Scope.close(scope, Exit.void)
    }))
})

describe("PgliteBridge Terminate", () => {
  it.live("runs the messages before Terminate, then ends the stream and frees the session", () =>
    Effect.gen(function*() {
      const raw = yield* openRaw
      yield* raw.write(startupPacket)
      yield* raw.untilReady(1)
      yield* raw.write(Buffer.concat([simpleQuery("SELECT 42 AS answer"), terminate]))
      yield* raw.until("end", () => raw.state.ended)
      assert.isUndefined(raw.state.error)
      assert.deepStrictEqual(raw.replies().map((message) => message.type), ["T", "D", "C", "Z"])
      const row = raw.messages().find((message) => message.type === "D")
      assert.isDefined(row)
      assert.deepStrictEqual(dataRowValues(row.body), ["42"])

      // Anything after Terminate is ignored, not executed nor answered.
      const before = raw.state.received.length
      yield* raw.write(simpleQuery("INSERT INTO bridge_animals (name) VALUES ('after terminate')"))
      assert.strictEqual(raw.state.received.length, before)
      assert.isUndefined(raw.state.error)

      // The session is free at once; the next connection does not wait out a timeout.
      const scope = yield* childScope
      const { connection } = yield* openConnection(scope, { connectTimeout: "2 seconds" })
      assert.strictEqual(yield* countNamed(connection, "after terminate"), 0)
      yield* Scope.close(scope, Exit.void)
      raw.state.duplex.end()
      yield* raw.until("close", () => raw.state.closed)
      assert.deepStrictEqual(yield* pgliteAnswers, [["1"]])
    }))

  it.live("treats the client's EOF like Terminate: ends its side too and frees the session", () =>
    Effect.gen(function*() {
      const raw = yield* openRaw
      yield* raw.write(startupPacket)
      yield* raw.untilReady(1)
      yield* raw.write(simpleQuery("BEGIN; INSERT INTO bridge_animals (name) VALUES ('before EOF')"))
      yield* raw.untilReady(2)
      raw.state.duplex.end()
      yield* raw.until("end", () => raw.state.ended)
      yield* raw.until("close", () => raw.state.closed)
      assert.isUndefined(raw.state.error)

      const scope = yield* childScope
      const { connection } = yield* openConnection(scope, { connectTimeout: "2 seconds" })
      assert.strictEqual(yield* countNamed(connection, "before EOF"), 0)
      yield* Scope.close(scope, Exit.void)
    }))
})

describe("PgliteBridge batched messages", () => {
  it.live("answers pipelined statements in order and fails only the one that errors", () =>
    Effect.gen(function*() {
      const exchangesBefore = exchanges.length
      const failing = 7
      const results = yield* withClient(
        (sql) =>
          Effect.forEach(
            Array.from({ length: 16 }, (_, i) => i),
            (i) =>
              Effect.result(
                i === failing ?
                  sql<{ readonly i: number }>`SELECT ${i}::int / 0 AS i` :
                  sql<{ readonly i: number }>`SELECT ${i}::int AS i`
              ),
            { concurrency: "unbounded" }
          ).pipe(Effect.flatMap((results) =>
            // The connection is still in step after the failure.
            Effect.map(sql<{ readonly after: string }>`SELECT 'after' AS after`, (after) => ({ results, after }))
          )),
        { multiplex: true }
      )

      for (const [i, result] of results.results.entries()) {
        if (i === failing) {
          assert.isTrue(Result.isFailure(result), `statement ${i} fails`)
          if (Result.isFailure(result)) assert.include(causeMessage(result.failure), "division by zero")
        } else {
          assert.isTrue(Result.isSuccess(result), `statement ${i} succeeds`)
          if (Result.isSuccess(result)) assert.deepStrictEqual(result.success, [{ i }])
        }
      }
      assert.deepStrictEqual(results.after, [{ after: "after" }])

      // The statements really travelled together: some exchange with PGlite
      // carried several extended-query cycles (one Sync each).
      const syncsPerExchange = exchanges.slice(exchangesBefore).map((bytes) => {
        let syncs = 0
        const buffer = Buffer.from(bytes)
        for (let offset = 0; buffer.length - offset >= 5; offset += 1 + buffer.readInt32BE(offset + 1)) {
          if (buffer.readUInt8(offset) === 0x53) syncs++
        }
        return syncs
      })
      assert.isAtLeast(Math.max(...syncsPerExchange), 2, `Syncs per exchange: ${syncsPerExchange.join(",")}`)
    }))

  it.live("runs several simple queries written at once and isolates the failing one", () =>
    Effect.gen(function*() {
      const raw = yield* openRaw
      yield* raw.write(startupPacket)
      yield* raw.untilReady(1)
      yield* raw.write(Buffer.concat([
        simpleQuery("SELECT 'one' AS v"),
        simpleQuery("SELECT 1/0 AS v"),
        simpleQuery("SELECT 'three' AS v")
      ]))
      yield* raw.untilReady(4)
      const replies = raw.replies()
      assert.deepStrictEqual(replies.map((message) => message.type), ["T", "D", "C", "Z", "E", "Z", "T", "D", "C", "Z"])
      const rows = replies.filter((message) => message.type === "D").map((message) => dataRowValues(message.body))
      assert.deepStrictEqual(rows, [["one"], ["three"]])
      assert.include(replies[4]?.body.toString("utf8") ?? "", "division by zero")
      yield* raw.write(terminate)
      yield* raw.until("end", () => raw.state.ended)
    }))

  it.live("holds a message split across writes until it is whole", () =>
    Effect.gen(function*() {
      const raw = yield* openRaw
      yield* raw.write(startupPacket)
      yield* raw.untilReady(1)
      // One byte at a time, each write acknowledged before the next.
      for (const byte of simpleQuery("SELECT 'reassembled' AS v")) yield* raw.write(Buffer.from([byte]))
      yield* raw.untilReady(2)
      const row = raw.messages().find((message) => message.type === "D")
      assert.isDefined(row)
      assert.deepStrictEqual(dataRowValues(row.body), ["reassembled"])
      // A whole message followed by the start of the next one.
      const next = simpleQuery("SELECT 'second' AS v")
      yield* raw.write(Buffer.concat([simpleQuery("SELECT 'first' AS v"), next.subarray(0, 3)]))
      yield* raw.untilReady(3)
      yield* raw.write(next.subarray(3))
      yield* raw.untilReady(4)
      const values = raw.messages().filter((message) => message.type === "D").map((message) =>
        dataRowValues(message.body)
      )
      assert.deepStrictEqual(values, [["reassembled"], ["first"], ["second"]])
      yield* raw.write(terminate)
      yield* raw.until("end", () => raw.state.ended)
    }))
})
