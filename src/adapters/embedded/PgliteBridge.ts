/**
 * Carries the PostgreSQL wire protocol between `@effect/sql-pg` and PGlite
 * through PgClient's `stream` option, so the SQL that runs against a
 * PostgreSQL server runs unchanged against the embedded database. No socket is
 * opened: whole messages go to PGlite (on its own thread, {@link PgliteThread})
 * in batches, and its replies come back on the stream, each statement's as soon
 * as PGlite has run it: a statement's answer never waits for the statements
 * batched after it (a create answered in time, not after a slow query behind it).
 *
 * PGlite is a single backend session. Every connection made through the
 * returned factory waits for its turn at that session, and hands it back reset
 * (see {@link resetSession}); give PgClient one connection, or connections
 * queue behind each other until their connect timeout.
 */
import { Duplex } from "node:stream"

/**
 * Where the messages run: PGlite, one batch at a time, in call order. Given `onReply`,
 * the reply goes to it in pieces as it is produced, and the promise resolves with the rest.
 */
export interface Backend {
  readonly exchange: (messages: Uint8Array, onReply?: (bytes: Uint8Array) => void) => Promise<Uint8Array>
}

// Request codes carried by the untyped packets a client may send before its
// startup message (PostgreSQL protocol, "Message Formats").
const sslRequestCode = 80877103
const gssEncRequestCode = 80877104
const cancelRequestCode = 80877102
/** PostgreSQL's own bound on a startup packet. */
const maxStartupPacketLength = 10_000
const terminateType = 0x58 // 'X'
/** Protocol 3.x, the only version PGlite (and sql-pg) speak. */
const protocolMajor = 3
/**
 * Frontend message types (PostgreSQL protocol, "Message Formats"). PGlite aborts on a
 * malformed startup packet and can loop forever on an unknown message type, so nothing
 * else reaches it.
 */
const frontendTypes = new Set(Array.from("BCcdDEfFHPpQSX", (type) => type.charCodeAt(0)))

/** The server's refusal of TLS or GSS encryption: PGlite has neither. */
const encryptionRefused = Buffer.from("N")

const typedMessage = (type: string, body: Buffer): Buffer => {
  const header = Buffer.alloc(5)
  header.write(type, 0, "latin1")
  header.writeInt32BE(4 + body.length, 1)
  return Buffer.concat([header, body])
}

const simpleQuery = (sql: string): Buffer => typedMessage("Q", Buffer.from(`${sql}\0`, "utf8"))

/**
 * Returns the session to the state of a fresh connection: `Sync` leaves an
 * interrupted extended-query cycle, `ROLLBACK` ends a transaction the previous
 * connection left open (so the next one's writes cannot land in it), and
 * `DISCARD ALL` drops prepared statements, cursors, temp tables and settings.
 */
const resetSession = Buffer.concat([
  typedMessage("S", Buffer.alloc(0)),
  simpleQuery("ROLLBACK"),
  simpleQuery("DISCARD ALL")
])

const bridgeError = (message: string): Error => new Error(`PgliteBridge: ${message}`)

/** A StartupMessage PostgreSQL would accept: protocol 3, NUL-terminated parameters naming a user. */
const assertStartupMessage = (packet: Buffer): void => {
  const version = packet.readInt32BE(4)
  if (version >>> 16 !== protocolMajor) {
    throw bridgeError(`unsupported protocol version ${version >>> 16}.${version & 0xffff}`)
  }
  if (packet.readUInt8(packet.length - 1) !== 0) throw bridgeError("startup parameters are not terminated")
  const keys = packet.subarray(8, packet.length - 1).toString("utf8").split("\0").filter((_, i) => i % 2 === 0)
  if (!keys.includes("user")) throw bridgeError("startup packet names no user")
}

const asError = (cause: unknown): Error =>
  cause instanceof Error ? cause : new Error("PgliteBridge: PGlite failed", { cause })

/**
 * Makes the `stream` factory for PgClient: each call opens one connection to
 * the given, already opened, PGlite.
 */
export const makePgliteStream = ({ exchange }: Backend): (() => Duplex) => {
  /** Settles when the connection that last claimed the session has released it. */
  let sessionReleased: Promise<void> = Promise.resolve()

  return () => {
    let pending: Buffer = Buffer.alloc(0)
    let started = false
    let ended = false
    /** Set once this connection has claimed the session. */
    let release: (() => void) | undefined

    const claimSession = (): Promise<void> => {
      const previous = sessionReleased
      let handOver!: () => void
      sessionReleased = new Promise((resolve) => handOver = resolve)
      let released = false
      release = () => {
        if (released) return
        released = true
        // Queued behind this connection's own messages (exchanges run in call
        // order); a failure means PGlite is closing, and then there is no session left.
        void previous
          .then(() => exchange(resetSession))
          .then(undefined, () => undefined)
          .finally(handOver)
      }
      return previous
    }

    /** Ends the connection as a server does: release the session, then EOF. */
    const finish = (): void => {
      release?.()
      if (ended) return
      ended = true
      if (!duplex.destroyed) duplex.push(null)
    }

    const respond = (bytes: Uint8Array): void => {
      if (bytes.length > 0 && !duplex.destroyed) duplex.push(bytes)
    }

    const startupPhase = async (): Promise<void> => {
      while (!started && !duplex.destroyed && pending.length >= 4) {
        const length = pending.readInt32BE(0)
        if (length < 8 || length > maxStartupPacketLength) {
          throw bridgeError(`invalid startup packet length ${length}`)
        }
        if (pending.length < length) return
        const packet = pending.subarray(0, length)
        pending = pending.subarray(length)
        const code = packet.readInt32BE(4)
        if (code === sslRequestCode || code === gssEncRequestCode) {
          // PGlite treats an SSLRequest as a startup packet and aborts (exit 1).
          respond(encryptionRefused)
        } else if (code === cancelRequestCode) {
          // PGlite runs each message batch to completion and cannot be
          // interrupted, so there is nothing to cancel; close as a server does.
          duplex.destroy()
        } else {
          assertStartupMessage(packet)
          await claimSession()
          if (duplex.destroyed) return
          respond(await exchange(packet))
          started = true
        }
      }
    }

    /**
     * Hands every whole message received so far to PGlite in one call (it
     * runs a batch like a pipelined socket read), stopping at `Terminate`.
     */
    const messagePhase = async (): Promise<void> => {
      let end = 0
      let terminated = false
      while (pending.length - end >= 5) {
        const length = pending.readInt32BE(end + 1)
        if (length < 4) throw bridgeError(`invalid message length ${length}`)
        const type = pending.readUInt8(end)
        if (!frontendTypes.has(type)) throw bridgeError(`unsupported message type 0x${type.toString(16)}`)
        if (pending.length - end < 1 + length) break
        if (pending.readUInt8(end) === terminateType) {
          terminated = true
          break
        }
        end += 1 + length
      }
      if (end > 0) {
        const batch = pending.subarray(0, end)
        pending = pending.subarray(end)
        respond(await exchange(batch, respond))
      }
      if (terminated) {
        pending = Buffer.alloc(0)
        finish()
      }
    }

    // Node's Writable calls `write`/`writev` one at a time, waiting for each
    // callback, which keeps this connection's messages in order.
    const accept = (chunk: Buffer, callback: (error?: Error | null) => void): void => {
      if (ended) return callback()
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      // Answer on a later tick, as a socket would: PgConnection writes its next
      // message from inside its 'data' handler.
      queueMicrotask(() => {
        startupPhase()
          .then(() => started && !duplex.destroyed ? messagePhase() : undefined)
          .then(() => callback(), (error: unknown) => callback(asError(error)))
      })
    }

    const duplex: Duplex = new Duplex({
      // Replies are pushed as PGlite produces them; the client always reads.
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        accept(chunk, callback)
      },
      writev(chunks, callback) {
        accept(Buffer.concat(chunks.map(({ chunk }) => chunk as Buffer)), callback)
      },
      final(callback) {
        finish()
        callback()
      },
      destroy(error, callback) {
        release?.()
        callback(error)
      }
    })
    return duplex
  }
}
