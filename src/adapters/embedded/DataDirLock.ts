/**
 * The embedded data directory's lock: a file holding the owning process id, so
 * that one process at a time opens the directory. Plain Node, no Effect: main.ts
 * takes it before it loads the rest of the service (see EmbeddedOpening).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { isAlive, startTimeOf } from "../process/LiveProcess.ts"

/**
 * Name of the file, inside the data directory, holding the owning process id and, where
 * /proc tells it, the owner's start time: `<pid> <starttime>` (a file of a pid alone,
 * written by an earlier version or on macOS, is read too).
 */
export const lockFileName = "animal-store.pid"

/**
 * What this process writes into a lock file: its pid, then its start time, so that a
 * later process given the same pid is not taken for this one.
 */
const ownContent = (): string => {
  const startTime = startTimeOf(process.pid)
  return startTime === undefined ? `${process.pid}\n` : `${process.pid} ${startTime}\n`
}

/** A lock file's owner, when its content names one. */
const ownerOf = (content: string): { readonly pid: number; readonly startTime: string | undefined } | undefined => {
  const match = /^([1-9]\d*)(?: (\d+))?$/.exec(content.trim())
  return match === null ? undefined : { pid: Number(match[1]), startTime: match[2] }
}

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
 * one whose process is gone (SIGKILL, crash): exited, a zombie not yet reaped (a
 * supervisor that restarts at once meets one), or another process given its pid. Two processes taking over the same
 * stale lock at the same instant could both succeed; a clean or live lock is never
 * shared. Throws on file system errors.
 */
export const lock = (dataDir: string): LockState => {
  Fs.mkdirSync(dataDir, { recursive: true })
  const lockPath = Path.join(dataDir, lockFileName)
  while (true) {
    try {
      Fs.writeFileSync(lockPath, ownContent(), { flag: "wx" })
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
    const owner = ownerOf(content)
    if (owner === undefined) {
      if (Date.now() - modifiedAt < unwrittenLockGraceMillis) return { _tag: "InUse", pid: undefined }
    } else if (isAlive(owner.pid, owner.startTime) && (owner.pid !== process.pid || heldLocks.has(lockPath))) {
      return { _tag: "InUse", pid: owner.pid }
    }
    Fs.rmSync(lockPath, { force: true })
  }
}

/** Removes the lock, unless it no longer names this process. */
export const unlock = (lockPath: string): void => {
  heldLocks.delete(lockPath)
  try {
    if (Fs.readFileSync(lockPath, "utf8") === ownContent()) Fs.rmSync(lockPath, { force: true })
  } catch {
    // Already gone.
  }
}
