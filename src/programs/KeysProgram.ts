#!/usr/bin/env node
/**
 * The composition root of `animal-store-keys` (npm run keys): picks how to reach the
 * configured store's keys, from the service's store settings (StoreConfig, through
 * StoreWiring), then runs the command (src/adapters/cli/KeysCommand.ts).
 *
 * - postgres: the database directly; running services see each change within a second
 *   through LISTEN/NOTIFY.
 * - embedded, service running: its admin port (the data directory is one process's),
 *   so the service changes its own cache at once.
 * - embedded, no service: the data directory directly, holding its lock meanwhile; one
 *   that holds no database is refused, never initialised.
 * - memory: nothing to manage; the keys live and die with the service process.
 */
import "./EnvFile.ts"
// Deep imports: the package index loads every platform module (redis, undici …).
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Exit } from "effect"
import { CliError, Command } from "effect/cli"
import * as KeysCommand from "../adapters/cli/KeysCommand.ts"
import * as UsagePresenter from "../adapters/cli/UsagePresenter.ts"
import * as FailureReport from "./FailureReport.ts"
import * as PackageVersion from "./PackageVersion.ts"
import { StoreConfig } from "./StoreConfig.ts"
import * as StoreWiring from "./StoreWiring.ts"


const main = Effect.gen(function*() {
  // The store's settings only: no HTTP setting can stop key management.
  const config = yield* StoreConfig
  // A short-lived command: two connections are plenty, and it keeps no key cache to update.
  // It manages a store the service made: a mistyped DATA_DIR must not become a new one.
  const keyAdmin = StoreWiring.keyAdmin(config, { poolSize: 2, listen: false, existingOnly: true })
  yield* Command.run(KeysCommand.make(keyAdmin), { version: PackageVersion.version })
}).pipe(
  // Usage errors are already printed, one line each, by the presenter.
  Effect.tapCause(FailureReport.report("animal-store-keys", CliError.isCliError)),
  Effect.provide([UsagePresenter.layer, NodeServices.layer])
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? 0 : 1)
})
