/**
 * `animal-store keys` (npm run keys): picks how to reach the configured store's keys, from
 * the service's store settings (StoreConfig, through StoreWiring), for the command
 * (src/adapters/cli/KeysCommand.ts).
 *
 * - postgres: the database directly; running services see each change within a second
 *   through LISTEN/NOTIFY.
 * - embedded, service running: its admin port (the data directory is one process's),
 *   so the service changes its own cache at once.
 * - embedded, no service: the data directory directly, holding its lock meanwhile; one
 *   that holds no database is refused, never initialised.
 * - memory: nothing to manage; the keys live and die with the service process.
 */
import { Effect, Layer } from "effect"
import * as KeysCommand from "../adapters/cli/KeysCommand.ts"
import { StoreConfig } from "./StoreConfig.ts"
import * as StoreWiring from "./StoreWiring.ts"

// Built when a subcommand runs, so `--help` reads no setting. The store's settings only:
// no HTTP setting can stop key management. A short-lived command: two connections are
// plenty, and it keeps no key cache to update. It manages a store the service made: a
// mistyped DATA_DIR must not become a new one.
const keyAdmin = Layer.unwrap(Effect.gen(function*() {
  const config = yield* StoreConfig
  return StoreWiring.keyAdmin(config, { poolSize: 2, listen: false, existingOnly: true })
}))

/** The command, on the keys the configuration reaches. */
export const command = KeysCommand.make(keyAdmin)
