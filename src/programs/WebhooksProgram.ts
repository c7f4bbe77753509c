#!/usr/bin/env node
/**
 * The composition root of `animal-store-webhooks` (npm run webhooks): the configured
 * store's webhook subscriptions, from the service's store settings (StoreConfig, through
 * StoreWiring), then the command (src/adapters/cli/WebhooksCommand.ts).
 *
 * - postgres: the database directly; running services read the subscriptions from it.
 * - embedded, service running: its admin port (the data directory is one process's); the
 *   service judges the URL by its own rules.
 * - embedded, no service: the data directory directly, holding its lock meanwhile; one
 *   that holds no database is refused, never initialised.
 * - memory: nothing to manage; the subscriptions live and die with the service process.
 */
import "./EnvFile.ts"
// Deep imports: the package index loads every platform module (redis, undici …).
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Exit } from "effect"
import { CliError, Command } from "effect/cli"
import * as UsagePresenter from "../adapters/cli/UsagePresenter.ts"
import * as WebhooksCommand from "../adapters/cli/WebhooksCommand.ts"
import { WebhookSenderHttp } from "../adapters/webhooks/index.ts"
import * as FailureReport from "./FailureReport.ts"
import * as PackageVersion from "./PackageVersion.ts"
import { WebhookAllowPrivate } from "./ServiceConfig.ts"
import { StoreConfig } from "./StoreConfig.ts"
import * as StoreWiring from "./StoreWiring.ts"

const main = Effect.gen(function*() {
  const config = yield* StoreConfig
  // A URL is judged as the service judges it: WEBHOOK_ALLOW_PRIVATE alike.
  const allowPrivate = yield* WebhookAllowPrivate
  // A short-lived command: two connections are plenty. It manages a store the service
  // made: a mistyped DATA_DIR must not become a new one.
  const admin = StoreWiring.webhookAdmin(
    config,
    { poolSize: 2, listen: false, existingOnly: true },
    WebhookSenderHttp.layer({ allowPrivate })
  )
  yield* Command.run(WebhooksCommand.make(admin), { version: PackageVersion.version })
}).pipe(
  // Usage errors are already printed, one line each, by the presenter.
  Effect.tapCause(FailureReport.report("animal-store-webhooks", CliError.isCliError)),
  Effect.provide([UsagePresenter.layer, NodeServices.layer])
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? 0 : 1)
})
