/**
 * Opening an embedded data directory: its lock, then the database thread with
 * PGlite open in it. Plain promises, no Effect, so that main.ts can begin it
 * before it loads the rest of the service: the two take about as long, and the
 * thread opens PGlite while the main thread loads modules. EmbeddedDatabase.layer
 * adopts an opening begun this way, or begins its own.
 */
import * as Path from "node:path"
import * as DataDirLock from "./DataDirLock.ts"
import * as PgliteThread from "./PgliteThread.ts"

/** How an opening ended. */
export type Opened =
  | { readonly _tag: "Opened"; readonly thread: PgliteThread.PgliteThread }
  | { readonly _tag: "InUse"; readonly pid: number | undefined }
  /** The lock could not be taken (`step: "lock"`) or PGlite not opened (`"open"`); nothing is held. */
  | { readonly _tag: "Failed"; readonly step: "lock" | "open"; readonly cause: unknown }

export interface Opening {
  /** The data directory, as an absolute path. */
  readonly dataDir: string
  /** Settles once the thread has opened PGlite or the opening has failed; never rejects. */
  readonly opened: Promise<Opened>
  /**
   * Once opened: closes PGlite and its thread (see PgliteThread.close), then removes
   * the lock, even when closing failed. The same promise however often it is called.
   */
  readonly release: () => Promise<void>
}

/** Takes `directory`'s lock (at once, synchronously) and starts opening PGlite on its thread. */
export const begin = (directory: string): Opening => {
  const dataDir = Path.resolve(directory)
  let state: DataDirLock.LockState
  try {
    state = DataDirLock.lock(dataDir)
  } catch (cause) {
    const failed: Opened = { _tag: "Failed", step: "lock", cause }
    return { dataDir, opened: Promise.resolve(failed), release: () => Promise.resolve() }
  }
  if (state._tag === "InUse") {
    return { dataDir, opened: Promise.resolve(state), release: () => Promise.resolve() }
  }
  const { lockPath } = state
  const opened = PgliteThread.open(dataDir).then(
    (thread): Opened => ({ _tag: "Opened", thread }),
    (cause: unknown): Opened => {
      DataDirLock.unlock(lockPath)
      return { _tag: "Failed", step: "open", cause }
    }
  )
  let released: Promise<void> | undefined
  const release = () =>
    released ??= opened.then(async (result) => {
      if (result._tag !== "Opened") return
      try {
        await result.thread.close()
      } finally {
        DataDirLock.unlock(lockPath)
      }
    })
  return { dataDir, opened, release }
}
