/**
 * One request and its reply at a time between the main thread and the
 * database thread, through shared memory rather than `postMessage`: a round
 * trip costs the main thread about half the CPU (no structured clone, no
 * message event), and the database thread, which has nothing else to do,
 * sleeps in `Atomics.wait` until the next request.
 *
 * Requests and replies travel in two growable `SharedArrayBuffer`s, the state
 * in a small `Int32Array`: the main thread writes a request and flips the
 * state to `request`; the database thread writes its reply and flips it to
 * `reply`; the main thread copies the reply out and sets it back to `idle`.
 *
 * A reply can also be taken in pieces while the request still runs: the
 * database thread publishes each piece as PGlite hands it over (each
 * statement's answer once that statement has finished), so the answer of a
 * statement does not wait for the statements sent after it in the same batch.
 */

/** The buffers both threads map; sent to the database thread at its start. */
export interface Buffers {
  readonly control: SharedArrayBuffer
  readonly request: SharedArrayBuffer
  readonly reply: SharedArrayBuffer
}

/** What a request asks for. */
export const RequestKind = { exchange: 0, close: 1 } as const
export type RequestKind = typeof RequestKind[keyof typeof RequestKind]

/** A reply: bytes, or a failure whose bytes are the UTF-8 message. */
export const ReplyKind = { ok: 0, failed: 1 } as const
export type ReplyKind = typeof ReplyKind[keyof typeof ReplyKind]

export interface Reply {
  readonly kind: ReplyKind
  readonly bytes: Uint8Array
}

/** Where the database thread writes a reply, in as many pieces as it comes in; each is published at once. */
export interface ReplyWriter {
  readonly write: (chunk: Uint8Array) => void
}

// Slots of the control array.
const state = 0
const requestLength = 1
const replyLength = 2
const kind = 3
/** How much of the reply the database thread has written so far. */
const published = 4
/**
 * Bumped at every published piece, at the reply and at abandonment: what a main thread
 * that takes pieces waits on, so no wake-up can slip between its look and its wait.
 */
const sequence = 5

const idle = 0
const request = 1
const reply = 2
/** Set by the main thread itself when the database thread is gone. */
const abandoned = 3

/**
 * How long a reply is awaited whole before it is taken in pieces. Most batches take less:
 * answered whole, they cost the main thread one wake-up rather than one per statement
 * (which took 3,000 batches of four `SELECT n` from 0.6–1.0 s of CPU to 1.1–1.5 s).
 */
const piecesAfterMs = 5

const initialBytes = 64 * 1024
/** PGlite's own bound on a reply. */
const maxBytes = 2 ** 30

export const makeBuffers = (): Buffers => ({
  control: new SharedArrayBuffer(6 * Int32Array.BYTES_PER_ELEMENT),
  request: new SharedArrayBuffer(initialBytes, { maxByteLength: maxBytes }),
  reply: new SharedArrayBuffer(initialBytes, { maxByteLength: maxBytes })
})

/** Copies `chunk` into `buffer` at `offset`, growing the buffer to fit. */
const put = (buffer: SharedArrayBuffer, offset: number, chunk: Uint8Array): number => {
  const end = offset + chunk.length
  if (end > buffer.byteLength) {
    if (end > maxBytes) throw new Error(`ExchangeChannel: ${end} bytes exceed ${maxBytes}`)
    // Doubling keeps a reply that arrives in many pieces from growing at each one.
    buffer.grow(Math.min(maxBytes, Math.max(end, 2 * buffer.byteLength)))
  }
  new Uint8Array(buffer, offset, chunk.length).set(chunk)
  return end
}

/** A copy of `buffer`'s bytes from `start` to `end`. */
const copy = (buffer: SharedArrayBuffer, start: number, end: number): Uint8Array =>
  Buffer.from(new Uint8Array(buffer, start, end - start))

/**
 * The main thread's end. `send` must not be called again before its previous
 * reply has settled. With `onPiece`, the reply's pieces go to it as the database
 * thread publishes them, and the reply settles with what was not handed over (an
 * ok reply: nothing; a failure: its message). `abandon` settles a pending and
 * every later `send` with `error`: the database thread is gone and will not answer.
 */
export const client = (buffers: Buffers) => {
  const control = new Int32Array(buffers.control)
  let gone: Error | undefined

  /** Hands each published piece to `onPiece` until the request is answered; returns where the handed-over bytes end. */
  const takePieces = async (onPiece: (bytes: Uint8Array) => void): Promise<number> => {
    const whole = Atomics.waitAsync(control, state, request, piecesAfterMs)
    if (whole.async) await whole.value
    let handed = 0
    while (true) {
      const seen = Atomics.load(control, sequence)
      const answered = Atomics.load(control, state) !== request
      const upTo = Atomics.load(control, published)
      if (upTo > handed && gone === undefined) {
        onPiece(copy(buffers.reply, handed, upTo))
        handed = upTo
      }
      if (answered) return handed
      const wait = Atomics.waitAsync(control, sequence, seen)
      if (wait.async) await wait.value
    }
  }

  const send = async (what: RequestKind, bytes: Uint8Array, onPiece?: (bytes: Uint8Array) => void): Promise<Reply> => {
    if (gone !== undefined) throw gone
    control[requestLength] = put(buffers.request, 0, bytes)
    control[kind] = what
    Atomics.store(control, published, 0)
    Atomics.store(control, state, request)
    Atomics.notify(control, state)
    let handed = 0
    if (onPiece === undefined) {
      const wait = Atomics.waitAsync(control, state, request)
      if (wait.async) await wait.value
    } else {
      handed = await takePieces(onPiece)
    }
    if (gone !== undefined) throw gone
    const failed = control[kind] === ReplyKind.failed
    const replied: Reply = {
      kind: failed ? ReplyKind.failed : ReplyKind.ok,
      // A failure's message follows the pieces published before it.
      bytes: copy(buffers.reply, failed ? control[published] ?? 0 : handed, control[replyLength] ?? 0)
    }
    Atomics.store(control, state, idle)
    return replied
  }

  // Wakes a `send` waiting for the reply, rather than racing every wait against
  // a promise that stays pending: each race would leave a reaction on it.
  const abandon = (error: Error): void => {
    gone = error
    Atomics.store(control, state, abandoned)
    Atomics.add(control, sequence, 1)
    Atomics.notify(control, state)
    Atomics.notify(control, sequence)
  }

  return { send, abandon }
}

const answer = (control: Int32Array, what: ReplyKind, length: number): void => {
  control[replyLength] = length
  control[kind] = what
  Atomics.store(control, state, reply)
  Atomics.add(control, sequence, 1)
  Atomics.notify(control, state)
  Atomics.notify(control, sequence)
}

/** Written after what was published, which the main thread may still be copying. */
const failure = (buffers: Buffers, control: Int32Array, length: number, error: unknown): void =>
  answer(
    control,
    ReplyKind.failed,
    put(buffers.reply, length, Buffer.from(error instanceof Error ? error.message : String(error)))
  )

/**
 * The database thread's end: answers every exchange with what `handle` writes
 * (or the message of what it throws) until a `close` request, which it
 * answers once `close` has settled. Blocks the thread while it waits; the
 * handlers' own promises settle between requests.
 */
export const serve = async (
  buffers: Buffers,
  handle: (request: Uint8Array, reply: ReplyWriter) => Promise<void>,
  close: () => Promise<void>
): Promise<void> => {
  const control = new Int32Array(buffers.control)
  let length = 0
  const writer: ReplyWriter = {
    write: (chunk) => {
      length = put(buffers.reply, length, chunk)
      Atomics.store(control, published, length)
      Atomics.add(control, sequence, 1)
      Atomics.notify(control, sequence)
    }
  }
  while (true) {
    const current = Atomics.load(control, state)
    if (current !== request) {
      // Woken by the next request's notify (going back to idle wakes no one).
      Atomics.wait(control, state, current)
      continue
    }
    const closing = control[kind] === RequestKind.close
    length = 0
    try {
      if (closing) await close()
      // A view, not a copy: replies go to the other buffer.
      else await handle(new Uint8Array(buffers.request, 0, control[requestLength] ?? 0), writer)
      answer(control, ReplyKind.ok, length)
    } catch (error) {
      failure(buffers, control, length, error)
    }
    if (closing) return
  }
}
