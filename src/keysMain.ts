#!/usr/bin/env node
/**
 * The composition root of `animal-store-keys` (npm run keys): picks how to reach the
 * configured store's keys, from the same variables as the service, then runs the
 * command (src/cli/KeysCommand.ts).
 *
 * - postgres: the database directly; running services see each change within a second
 *   through LISTEN/NOTIFY.
 * - embedded, service running: its admin port (the data directory is one process's),
 *   so the service changes its own cache at once.
 * - embedded, no service: the data directory directly, holding its lock meanwhile.
 * - memory: nothing to manage; the keys live and die with the service process.
 */
// Deep imports: the package index loads every platform module (redis, undici …).
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Config, Console, Effect, Exit, Layer, Option, Schema } from "effect"
import { CliError, Command } from "effect/cli"
import { readFileSync } from "node:fs"
import * as ApiKeyAdminLocal from "./adapters/apikeys/ApiKeyAdminLocal.ts"
import * as EmbeddedDatabase from "./adapters/embedded/EmbeddedDatabase.ts"
import * as AdminFile from "./adapters/http/admin/AdminFile.ts"
import * as ApiKeyAdminHttp from "./adapters/http/admin/ApiKeyAdminHttp.ts"
import * as ApiKeyStoreSql from "./adapters/postgres/keys/ApiKeyStoreSql.ts"
import * as PostgresClient from "./adapters/postgres/PostgresClient.ts"
import { AppConfig } from "./AppConfig.ts"
import * as KeysCommand from "./cli/KeysCommand.ts"
import { InvalidInput } from "./domain/Errors.ts"

// Written only in package.json, one directory up from src/ and from dist/ alike.
const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { readonly version: string }).version

const keyAdmin = (config: AppConfig) =>
  Layer.unwrap(Effect.gen(function*() {
    const local = ApiKeyAdminLocal.layer.pipe(
      Layer.provide(ApiKeyStoreSql.layer({ timeout: config.databaseStatementTimeout, listen: false }))
    )
    switch (config.store) {
      case "memory":
        return yield* Effect.fail(
          new Error("STORE=memory keeps its keys inside the service process; there is nothing to manage")
        )
      case "embedded": {
        const running = yield* AdminFile.read(config.dataDir)
        return Option.isSome(running)
          ? ApiKeyAdminHttp.layer(running.value)
          : local.pipe(Layer.provide(EmbeddedDatabase.layer({ dataDir: config.dataDir })))
      }
      case "postgres": {
        const url = yield* Effect.fromOption(config.databaseUrl).pipe(
          Effect.mapError(() => new Error("STORE=postgres needs DATABASE_URL"))
        )
        return local.pipe(Layer.provide(PostgresClient.layer({
          url,
          poolSize: 2,
          connectTimeout: config.databaseConnectTimeout,
          statementTimeout: config.databaseStatementTimeout
        })))
      }
    }
  }))

const main = Effect.gen(function*() {
  const config = yield* AppConfig
  yield* Command.run(KeysCommand.make(keyAdmin(config)), { version: VERSION })
}).pipe(
  // Usage errors are already printed by the CLI module; anything else gets one plain line.
  Effect.tapCause((cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.void
    const error = Cause.squash(cause)
    if (CliError.isCliError(error)) return Effect.void
    const message = error instanceof Config.ConfigError && Schema.isSchemaError(error.cause)
      ? `invalid configuration: ${InvalidInput.fromIssue(error.cause.issue).message}`
      : error instanceof Error ? error.message : String(error)
    return Console.error(`animal-store-keys: ${message}`)
  }),
  Effect.provide(NodeServices.layer)
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? 0 : 1)
})
