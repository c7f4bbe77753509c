/**
 * The embedded database: PGlite (PostgreSQL compiled to WASM) persisted to a
 * directory and running on a thread of its own, served to `@effect/sql-pg`'s
 * PgClient through the wire-protocol bridge, so the same SQL runs here and
 * against a PostgreSQL server. No port is opened.
 */
import type { PgClient } from "@effect/sql-pg"
import { SqlPgDriver } from "../postgres/index.ts"
import { Data, Effect, type Layer } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as EmbeddedMaintenance from "./EmbeddedMaintenance.ts"
import * as EmbeddedOpening from "./EmbeddedOpening.ts"
import { makePgliteStream } from "./PgliteBridge.ts"
import type * as PgliteThread from "./PgliteThread.ts"

export { lockFileName } from "./DataDirLock.ts"

/** Where the embedded database lives. */
export interface Options {
  /** Directory holding the database; created, and initialized, when missing (unless `existingOnly`). */
  readonly dataDir: string
  /**
   * Refuse a directory that holds no database rather than initialise one: a tool run on
   * a mistyped DATA_DIR must not leave a new store behind.
   */
  readonly existingOnly?: boolean | undefined
  /**
   * The opening of `dataDir` begun earlier with `EmbeddedOpening.begin`, for the layer
   * to adopt (and release) instead of beginning its own.
   */
  readonly opening?: EmbeddedOpening.Opening | undefined
  /** When the maintenance passes run, and for how long at most; EmbeddedMaintenance's defaults when omitted. */
  readonly maintenance?: EmbeddedMaintenance.Schedule | undefined
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

/** Waits for an opening and turns its failures into this module's errors. */
const opened = (
  opening: EmbeddedOpening.Opening
): Effect.Effect<PgliteThread.PgliteThread, DataDirInUseError | EmbeddedDatabaseError> =>
  Effect.flatMap(Effect.promise(() => opening.opened), (result): ReturnType<typeof opened> => {
    const { dataDir } = opening
    switch (result._tag) {
      case "Opened":
        return Effect.succeed(result.thread)
      case "InUse":
        return Effect.fail(
          new DataDirInUseError({
            dataDir,
            pid: result.pid,
            message: `DATA_DIR ${dataDir} is in use by another Animal Store process (pid ${result.pid ?? "unknown"})`
          })
        )
      case "Failed":
        return Effect.fail(
          new EmbeddedDatabaseError({
            dataDir,
            message: result.step === "lock" ?
              `Cannot lock DATA_DIR ${dataDir}: ${String(result.cause)}` :
              `Cannot open the database in DATA_DIR ${dataDir}`,
            cause: result.cause
          })
        )
    }
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
  SqlPgDriver.SqlPg.PgClient.layerFrom(Effect.gen(function*() {
    const dataDir = Path.resolve(options.dataDir)
    if (options.opening !== undefined && options.opening.dataDir !== dataDir) {
      return yield* Effect.die(new Error(`EmbeddedDatabase: given the opening of ${options.opening.dataDir} for ${dataDir}`))
    }
    // PostgreSQL's mark of a data directory (the lock would create the directory itself).
    if (options.existingOnly === true && !Fs.existsSync(Path.join(dataDir, "PG_VERSION"))) {
      return yield* new EmbeddedDatabaseError({
        dataDir,
        message: `DATA_DIR ${dataDir} holds no Animal Store database; \`npm start\` creates one there`,
        cause: undefined
      })
    }
    // Begun inside the acquisition, so that no interruption comes between the lock and its release.
    const { thread } = yield* Effect.acquireRelease(
      Effect.suspend(() => {
        const opening = options.opening ?? EmbeddedOpening.begin(dataDir)
        return Effect.map(opened(opening), (thread) => ({ opening, thread }))
      }),
      ({ opening }) =>
        Effect.tryPromise(opening.release).pipe(
          Effect.ignore({ log: "Warn", message: `Closing the database in DATA_DIR ${dataDir} failed` })
        )
    )
    const client = yield* SqlPgDriver.SqlPg.PgClient.make({
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
    yield* Effect.forkScoped(EmbeddedMaintenance.run(client, options.maintenance))
    return client
  }))
