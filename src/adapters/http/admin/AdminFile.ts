/**
 * How the keys and webhooks commands find a running service's admin port: the service
 * writes its pid, the port and a fresh random token to a file in the data directory,
 * readable by the directory's owner only, and removes it when it stops. Whoever may
 * read the data directory may manage its keys anyway; nobody else gets the token.
 */
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpServer } from "effect/http"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { isAlive, startTimeOf } from "../../process/LiveProcess.ts"

/** Name of the file, inside the data directory, that holds the admin address and token. */
export const ADMIN_FILE_NAME = "animal-store.admin.json"

/**
 * Where a running service's admin routes are, and the token they require. The start time
 * (where /proc tells it) makes the pid name that process only, not a later one given its pid.
 */
export const AdminAddress = Schema.Struct({
  pid: Schema.Int,
  startTime: Schema.optionalKey(Schema.String),
  port: Schema.Int,
  token: Schema.String
})
/** A value of {@link AdminAddress}. */
export type AdminAddress = typeof AdminAddress.Type

/**
 * Writes the admin file for the HttpServer in context (the admin server) while the
 * layer lives; a file left by a killed process is replaced.
 */
export const layer = (dataDir: string, token: Redacted.Redacted<string>): Layer.Layer<never, never, HttpServer.HttpServer> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const port = server.address._tag === "UnixPathAddress" ? 0 : server.address.port
    const file = Path.join(Path.resolve(dataDir), ADMIN_FILE_NAME)
    const content = JSON.stringify({ pid: process.pid, startTime: startTimeOf(process.pid), port, token: Redacted.value(token) })
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        // Written whole, then renamed into place: a reader never sees half a file.
        const partial = `${file}.${process.pid}`
        Fs.writeFileSync(partial, content, { mode: 0o600 })
        Fs.renameSync(partial, file)
      }),
      () => Effect.sync(() => Fs.rmSync(file, { force: true }))
    )
  }))

/** The admin address of the live service on `dataDir`, if one is running there. */
export const read = (dataDir: string): Effect.Effect<Option.Option<AdminAddress>> =>
  Effect.sync(() => {
    try {
      const parsed = Schema.decodeUnknownOption(Schema.fromJsonString(AdminAddress))(
        Fs.readFileSync(Path.join(Path.resolve(dataDir), ADMIN_FILE_NAME), "utf8")
      )
      return Option.filter(parsed, (address) => isAlive(address.pid, address.startTime))
    } catch {
      // No file: no service.
      return Option.none()
    }
  })
