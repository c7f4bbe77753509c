/**
 * The embedded data directory's lock: a file holding the owning process id, so
 * that one process at a time opens the directory. Plain Node, no Effect: main.ts
 * takes it before it loads the rest of the service (see EmbeddedOpening).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { isAlive } from "../LiveProcess.ts"

/** Name of the file, inside the data directory, holding the owning process id. */
export const lockFileName = "animal-store.pid"

/**
 * A lock younger than this whose content is not a pid is taken to be one a
 * starting process has created but not written yet.
 */
const unwrittenLockGraceMillis = 2_000

/**
 * Lock files this process holds. Its own pid in any other lock file was left
 * by an earlier process that had the same pid, which is common in containers.
 */
const heldLocks = new Set<string>()

const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code

/** The outcome of {@link lock}. */
export type LockState =
  | { readonly _tag: "Acquired"; readonly lockPath: string }
  | { readonly _tag: "InUse"; readonly pid: number | undefined }

/**
 * Creates `dataDir` if needed and its lock file exclusively (`wx`), taking over
 * one whose process is gone (SIGKILL, crash). Two processes taking over the same
 * stale lock at the same instant could both succeed; a clean or live lock is never
 * shared. Throws on file system errors.
 */
export const lock = (dataDir: string): LockState => {
  Fs.mkdirSync(dataDir, { recursive: true })
  const lockPath = Path.join(dataDir, lockFileName)
  while (true) {
    try {
      Fs.writeFileSync(lockPath, `${process.pid}\n`, { flag: "wx" })
      heldLocks.add(lockPath)
      return { _tag: "Acquired", lockPath }
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error
    }
    let content: string
    let modifiedAt: number
    try {
      content = Fs.readFileSync(lockPath, "utf8")
      modifiedAt = Fs.statSync(lockPath).mtimeMs
    } catch (error) {
      // Released between our attempt and the read: try again.
      if (errorCode(error) === "ENOENT") continue
      throw error
    }
    const pid = /^[1-9]\d*$/.test(content.trim()) ? Number(content.trim()) : undefined
    if (pid === undefined) {
      if (Date.now() - modifiedAt < unwrittenLockGraceMillis) return { _tag: "InUse", pid }
    } else if (isAlive(pid) && (pid !== process.pid || heldLocks.has(lockPath))) {
      return { _tag: "InUse", pid }
    }
    Fs.rmSync(lockPath, { force: true })
  }
}

/** Removes the lock, unless it no longer names this process. */
export const unlock = (lockPath: string): void => {
  heldLocks.delete(lockPath)
  try {
    if (Fs.readFileSync(lockPath, "utf8").trim() === String(process.pid)) Fs.rmSync(lockPath, { force: true })
  } catch {
    // Already gone.
  }
}
