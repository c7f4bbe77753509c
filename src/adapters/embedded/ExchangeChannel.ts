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

/** Where the database thread writes a reply, in as many pieces as it comes in. */
export interface ReplyWriter {
  readonly write: (chunk: Uint8Array) => void
}

// Slots of the control array.
const state = 0
const requestLength = 1
const replyLength = 2
const kind = 3

const idle = 0
const request = 1
const reply = 2
/** Set by the main thread itself when the database thread is gone. */
const abandoned = 3

const initialBytes = 64 * 1024
/** PGlite's own bound on a reply. */
const maxBytes = 2 ** 30

export const makeBuffers = (): Buffers => ({
  control: new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT),
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

/**
 * The main thread's end. `send` must not be called again before its previous
 * reply has settled. `abandon` settles a pending and every later `send` with
 * `error`: the database thread is gone and will not answer.
 */
export const client = (buffers: Buffers) => {
  const control = new Int32Array(buffers.control)
  let gone: Error | undefined

  const send = async (what: RequestKind, bytes: Uint8Array): Promise<Reply> => {
    if (gone !== undefined) throw gone
    control[requestLength] = put(buffers.request, 0, bytes)
    control[kind] = what
    Atomics.store(control, state, request)
    Atomics.notify(control, state)
    const wait = Atomics.waitAsync(control, state, request)
    if (wait.async) await wait.value
    if (gone !== undefined) throw gone
    const replied: Reply = {
      kind: control[kind] === ReplyKind.failed ? ReplyKind.failed : ReplyKind.ok,
      bytes: Buffer.from(new Uint8Array(buffers.reply, 0, control[replyLength] ?? 0))
    }
    Atomics.store(control, state, idle)
    return replied
  }

  // Wakes a `send` waiting for the reply, rather than racing every wait against
  // a promise that stays pending: each race would leave a reaction on it.
  const abandon = (error: Error): void => {
    gone = error
    Atomics.store(control, state, abandoned)
    Atomics.notify(control, state)
  }

  return { send, abandon }
}

const answer = (control: Int32Array, what: ReplyKind, length: number): void => {
  control[replyLength] = length
  control[kind] = what
  Atomics.store(control, state, reply)
  Atomics.notify(control, state)
}

const failure = (buffers: Buffers, control: Int32Array, error: unknown): void =>
  answer(
    control,
    ReplyKind.failed,
    put(buffers.reply, 0, Buffer.from(error instanceof Error ? error.message : String(error)))
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
      failure(buffers, control, error)
    }
    if (closing) return
  }
}
