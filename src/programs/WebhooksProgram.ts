/**
 * `animal-store webhooks` (npm run webhooks): the configured store's webhook
 * subscriptions, from the service's store settings (StoreConfig, through StoreWiring),
 * for the command (src/adapters/cli/WebhooksCommand.ts).
 *
 * - postgres: the database directly; running services read the subscriptions from it.
 * - embedded, service running: its admin port (the data directory is one process's); the
 *   service judges the URL by its own rules.
 * - embedded, no service: the data directory directly, holding its lock meanwhile; one
 *   that holds no database is refused, never initialised.
 * - memory: nothing to manage; the subscriptions live and die with the service process.
 */
import { Effect, Layer } from "effect"
import * as WebhooksCommand from "../adapters/cli/WebhooksCommand.ts"
import { WebhookSenderHttp } from "../adapters/webhooks/index.ts"
import { WebhookAllowPrivate } from "./ServiceConfig.ts"
import { StoreConfig } from "./StoreConfig.ts"
import * as StoreWiring from "./StoreWiring.ts"

// Built when a subcommand runs, so `--help` reads no setting. A URL is judged as the
// service judges it: WEBHOOK_ALLOW_PRIVATE alike. A short-lived command: two connections
// are plenty. It manages a store the service made: a mistyped DATA_DIR must not become a
// new one.
const webhookAdmin = Layer.unwrap(Effect.gen(function*() {
  const config = yield* StoreConfig
  const allowPrivate = yield* WebhookAllowPrivate
  return StoreWiring.webhookAdmin(
    config,
    { poolSize: 2, listen: false, existingOnly: true },
    WebhookSenderHttp.layer({ allowPrivate })
  )
}))

/** The command, on the subscriptions the configuration reaches. */
export const command = WebhooksCommand.make(webhookAdmin)
