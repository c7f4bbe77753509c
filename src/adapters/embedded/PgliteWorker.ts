/**
 * The embedded database's thread (a `worker_threads` Worker): it owns PGlite
 * and runs the PostgreSQL wire-protocol messages the main thread sends it, so
 * SQL runs on one core while HTTP runs on another.
 *
 * An empty data directory is filled from the {@link PgdataTemplate} when
 * there is one (next to the module, or in the animal-store-pgdata package).
 * The thread reports `Ready` (or `Failed`) once PGlite is open, then serves
 * exchanges over the {@link ExchangeChannel} until asked to close, closes
 * PGlite (a shutdown checkpoint), answers the close and ends.
 */
import { PGlite } from "@electric-sql/pglite"
import * as Fs from "node:fs"
import * as V8 from "node:v8"
import { parentPort, workerData } from "node:worker_threads"
import * as ExchangeChannel from "./ExchangeChannel.ts"
import * as PgdataTemplate from "./PgdataTemplate.ts"
import { pgliteOptions, v8Flags } from "./PgliteSettings.ts"

/** What the main thread passes at the start. */
export interface Start {
  readonly dataDir: string
  readonly buffers: ExchangeChannel.Buffers
}

/** What the thread posts once, when PGlite is open or could not be opened. */
export type Started =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Failed"; readonly error: unknown }

const { buffers, dataDir } = workerData as Start
const port = parentPort!

/**
 * Runs one batch of messages. The streaming call hands over PGlite's reply
 * pieces as they are produced (views of its memory, copied at once) and keeps
 * nothing: `execProtocolRaw` also parses every reply message into objects and
 * appends them to a list only PGlite's own query API clears, about 9 KB per
 * 50-row result, for as long as the database is open.
 */
const exchange = (pglite: PGlite) => (messages: Uint8Array, reply: ExchangeChannel.ReplyWriter): Promise<void> =>
  pglite.execProtocolRawStream(messages, { syncToFs: false, onRawData: reply.write })

// Before PGlite compiles its WebAssembly.
V8.setFlagsFromString(v8Flags)

/** PostgreSQL's log prefix (`%m [%p] `), left out of what is reported. */
const logPrefix = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[\d+\] /
/** Routine messages of a start, not reported. */
const routine = /^(?:LOG|INFO|NOTICE|DEBUG\d?|STATEMENT):/
/** Enough of PostgreSQL's last words on a failed start. */
const reportedLines = 10

/**
 * Opens PGlite, filling an empty directory from the template first. PGlite
 * fails a start with only "PGlite failed to initialize properly"; what
 * PostgreSQL said on its stderr is added to that, with the data directory's
 * path inside PGlite's file system replaced by the real one.
 */
const open = async (): Promise<PGlite> => {
  const template = PgdataTemplate.initialised(dataDir) ? undefined : PgdataTemplate.located()
  if (template !== undefined) PgdataTemplate.restore(Fs.readFileSync(template), dataDir)
  const said: Array<string> = []
  let starting = true
  const onStderr = (line: string): boolean => {
    const text = line.replace(logPrefix, "").replaceAll(PGlite.paths.PGDATA, dataDir).replace(/:\s+/, ": ")
    if (starting && !routine.test(text)) {
      said.push(text)
      if (said.length > reportedLines) said.shift()
    }
    return false
  }
  try {
    return await PGlite.create(dataDir, { ...pgliteOptions, onStderr })
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    throw said.length === 0 ? error : new Error(`${message}: ${said.join(" ")}`, { cause: error })
  } finally {
    starting = false
  }
}

const opened = await open().then(
  (pglite) => pglite,
  (error: unknown) => {
    port.postMessage({ _tag: "Failed", error } satisfies Started)
    return undefined
  }
)
if (opened !== undefined) {
  port.postMessage({ _tag: "Ready" } satisfies Started)
  await ExchangeChannel.serve(buffers, exchange(opened), () => opened.close())
}
port.close()
