/**
 * The main thread's handle on the database thread ({@link PgliteWorker}):
 * starts it, hands it wire-protocol messages one batch at a time, and stops
 * it. While no exchange is under way the thread does not keep the process
 * alive, as an in-process database would not.
 */
import { Worker } from "node:worker_threads"
import * as ExchangeChannel from "./ExchangeChannel.ts"
import type { Start, Started } from "./PgliteWorker.ts"

export interface PgliteThread {
  /**
   * Runs protocol messages in PGlite; batches run one at a time, in call order. Resolves
   * with the reply, or, given `onReply`, hands the reply to it in pieces as PGlite
   * produces them (each statement's answer once that statement has run) and resolves
   * with nothing more once the batch has run.
   */
  readonly exchange: (messages: Uint8Array, onReply?: (bytes: Uint8Array) => void) => Promise<Uint8Array>
  /**
   * Lets the exchanges already asked for finish, closes PGlite (a shutdown
   * checkpoint) and waits for the thread to end. Later exchanges are refused.
   */
  readonly close: () => Promise<void>
}

// Run from src/ (TypeScript, type stripping) or from the built dist/ (JavaScript).
const workerUrl = new URL(`./PgliteWorker.${import.meta.url.endsWith(".ts") ? "ts" : "js"}`, import.meta.url)

const threadError = (message: string, cause?: unknown): Error =>
  new Error(`PgliteThread: ${message}`, cause === undefined ? undefined : { cause })

/** Starts the database thread on `dataDir` and resolves once PGlite is open in it. */
export const open = (dataDir: string): Promise<PgliteThread> =>
  new Promise((resolve, reject) => {
    const buffers = ExchangeChannel.makeBuffers()
    const channel = ExchangeChannel.client(buffers)
    const worker = new Worker(workerUrl, {
      workerData: { dataDir, buffers } satisfies Start,
      // The thread runs one fixed module: the host's command-line options are not
      // for it, and some (`--input-type` of `node -e`) make a file worker fail.
      execArgv: [],
      // Its garbage is small and short-lived; a young generation of the default size
      // (up to 48 MB) only holds more of it resident.
      resourceLimits: { maxYoungGenerationSizeMb: 4 }
    })

    let ready = false
    let closing = false
    /** Settles when the last exchange asked for has. */
    let queue: Promise<unknown> = Promise.resolve()
    /** Exchanges asked for and not settled; the thread is ref'd while there are any. */
    let inFlight = 0
    const exited = new Promise<number>((resolve) => worker.once("exit", resolve))

    worker.once("message", (started: Started) => {
      if (started._tag === "Failed") {
        // Whatever PGlite left behind must not keep the thread, or the process, alive.
        void worker.terminate()
        return reject(started.error)
      }
      ready = true
      worker.unref()
      resolve({ exchange, close })
    })
    worker.once("error", (error) => {
      if (!ready) reject(error)
      channel.abandon(threadError("the database thread failed", error))
    })
    void exited.then((code) => {
      if (!ready) reject(threadError(`the database thread stopped while starting (exit code ${code})`))
      channel.abandon(threadError(`the database thread has stopped (exit code ${code})`))
    })

    const send = (
      kind: ExchangeChannel.RequestKind,
      messages: Uint8Array,
      onReply?: (bytes: Uint8Array) => void
    ): Promise<Uint8Array> => {
      if (inFlight++ === 0) worker.ref()
      const sent = queue.then(() => channel.send(kind, messages, onReply)).then((reply) => {
        if (reply.kind === ExchangeChannel.ReplyKind.failed) {
          throw threadError(Buffer.from(reply.bytes).toString("utf8"))
        }
        return reply.bytes
      }).finally(() => {
        if (--inFlight === 0 && !closing) worker.unref()
      })
      queue = sent.catch(() => undefined)
      return sent
    }

    const exchange = (messages: Uint8Array, onReply?: (bytes: Uint8Array) => void): Promise<Uint8Array> =>
      closing
        ? Promise.reject(threadError("the database is closed"))
        : send(ExchangeChannel.RequestKind.exchange, messages, onReply)

    let closed: Promise<void> | undefined
    const close = (): Promise<void> => {
      closing = true
      // Held until the thread has ended, so the process waits for it.
      worker.ref()
      closed ??= send(ExchangeChannel.RequestKind.close, new Uint8Array(0)).then(async () => {
        const code = await exited
        if (code !== 0) throw threadError(`the database thread ended with exit code ${code}`)
      })
      return closed
    }
  })
