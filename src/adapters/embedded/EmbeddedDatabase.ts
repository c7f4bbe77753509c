/**
 * The embedded database: PGlite (PostgreSQL compiled to WASM) persisted to a
 * directory and running on a thread of its own, served to `@effect/sql-pg`'s
 * PgClient through the wire-protocol bridge, so the same SQL runs here and
 * against a PostgreSQL server. No port is opened.
 */
import { PgClient } from "@effect/sql-pg"
import { Data, Effect, type Layer } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { isAlive } from "../LiveProcess.ts"
import * as EmbeddedMaintenance from "./EmbeddedMaintenance.ts"
import { makePgliteStream } from "./PgliteBridge.ts"
import * as PgliteThread from "./PgliteThread.ts"

/** Where the embedded database lives. */
export interface Options {
  /** Directory holding the database; created, and initialized, when missing. */
  readonly dataDir: string
}

/** Another live process (or this one) has the data directory open. */
export class DataDirInUseError extends Data.TaggedError("DataDirInUseError")<{
  readonly dataDir: string
  /** `undefined` while the owner has created its lock file but not written it yet. */
  readonly pid: number | undefined
  readonly message: string
}> {}

/** The data directory or the database in it could not be opened. */
export class EmbeddedDatabaseError extends Data.TaggedError("EmbeddedDatabaseError")<{
  readonly dataDir: string
  readonly message: string
  readonly cause: unknown
}> {}

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

type LockState =
  | { readonly _tag: "Acquired" }
  | { readonly _tag: "InUse"; readonly pid: number | undefined }

/**
 * Creates the lock file exclusively (`wx`), taking over one whose process is
 * gone (SIGKILL, crash). Two processes taking over the same stale lock at the
 * same instant could both succeed; a clean or live lock is never shared.
 */
const lockSync = (lockPath: string): LockState => {
  while (true) {
    try {
      Fs.writeFileSync(lockPath, `${process.pid}\n`, { flag: "wx" })
      heldLocks.add(lockPath)
      return { _tag: "Acquired" }
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
const unlockSync = (lockPath: string): void => {
  heldLocks.delete(lockPath)
  try {
    if (Fs.readFileSync(lockPath, "utf8").trim() === String(process.pid)) Fs.rmSync(lockPath, { force: true })
  } catch {
    // Already gone.
  }
}

const acquireLock = (dataDir: string): Effect.Effect<string, DataDirInUseError | EmbeddedDatabaseError> => {
  const lockPath = Path.join(dataDir, lockFileName)
  return Effect.try({
    try: () => {
      Fs.mkdirSync(dataDir, { recursive: true })
      return lockSync(lockPath)
    },
    catch: (cause) =>
      new EmbeddedDatabaseError({ dataDir, message: `Cannot lock DATA_DIR ${dataDir}: ${String(cause)}`, cause })
  }).pipe(
    Effect.flatMap((state) =>
      state._tag === "Acquired" ?
        Effect.succeed(lockPath) :
        Effect.fail(
          new DataDirInUseError({
            dataDir,
            pid: state.pid,
            message: `DATA_DIR ${dataDir} is in use by another Animal Store process (pid ${state.pid ?? "unknown"})`
          })
        )
    )
  )
}

const openThread = (dataDir: string): Effect.Effect<PgliteThread.PgliteThread, EmbeddedDatabaseError> =>
  Effect.tryPromise({
    try: () => PgliteThread.open(dataDir),
    catch: (cause) =>
      new EmbeddedDatabaseError({ dataDir, message: `Cannot open the database in DATA_DIR ${dataDir}`, cause })
  })

/**
 * Provides `PgClient` and `SqlClient` backed by PGlite in `dataDir`, holding
 * the directory's lock for the layer's lifetime, and keeps its statistics and
 * free space up to date (EmbeddedMaintenance). Release closes the client, then
 * PGlite and its thread, then removes the lock.
 */
export const layer = (
  options: Options
): Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient,
  DataDirInUseError | EmbeddedDatabaseError | SqlError.SqlError
> =>
  PgClient.layerFrom(Effect.gen(function*() {
    const dataDir = Path.resolve(options.dataDir)
    yield* Effect.acquireRelease(acquireLock(dataDir), (lockPath) => Effect.sync(() => unlockSync(lockPath)))
    const thread = yield* Effect.acquireRelease(
      openThread(dataDir),
      (thread) =>
        Effect.tryPromise(() => thread.close()).pipe(
          Effect.ignore({ log: "Warn", message: `Closing the database in DATA_DIR ${dataDir} failed` })
        )
    )
    const client = yield* PgClient.make({
      stream: makePgliteStream(thread),
      // PGlite is one backend session: a second connection would only queue.
      maxConnections: 1,
      // Statements of concurrent requests travel together on that connection, so
      // the database thread runs one batch while the main thread serves HTTP and
      // gathers the next; a transaction still has the connection to itself.
      multiplex: true,
      // Keep that connection rather than reconnecting after idle periods.
      minConnections: 1,
      // PGlite accepts any user and has one database; the client insists on a
      // username, which it would otherwise take from $USER.
      username: "postgres",
      database: "postgres"
    })
    yield* Effect.forkScoped(EmbeddedMaintenance.run(client))
    return client
  }))
