/**
 * `animal-store migrate` (npm run migrate): the store's schema migrations, on the store
 * the service's settings pick (StoreConfig, through StoreWiring), for deployments that
 * migrate before they roll out and start their instances with MIGRATE=off.
 *
 * - `status`: every migration this release knows, `applied` or `pending`, one a line;
 *   a DATA_DIR that holds no database is refused, never initialised.
 * - `apply`: runs the pending ones and names each; a new DATA_DIR is initialised, as
 *   `npm start` would. On the embedded store no service may hold the directory meanwhile.
 */
import { Console, Effect, Layer } from "effect"
import { Command } from "effect/cli"
import * as Migrations from "../adapters/postgres/Migrations.ts"
import * as SchemaMigrations from "../adapters/postgres/SchemaMigrations.ts"
import { StoreConfig } from "./StoreConfig.ts"
import * as StoreWiring from "./StoreWiring.ts"

const migrationName = (id: number, name: string) => `${String(id).padStart(4, "0")}_${name}`

// Built when a subcommand runs, so `--help` reads no setting. One short-lived session
// is enough; it keeps no key cache.
const database = (existingOnly: boolean) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* StoreConfig
    return StoreWiring.database(config, { poolSize: 1, listen: false, existingOnly })
  }))

const status = Command.make("status", {}, () =>
  Effect.gen(function*() {
    const migrations = yield* Migrations.status
    const width = Math.max(...migrations.map(({ id, name }) => migrationName(id, name).length))
    for (const { applied, id, name } of migrations) {
      yield* Console.log(`${migrationName(id, name).padEnd(width)}  ${applied ? "applied" : "pending"}`)
    }
  })).pipe(
    Command.withDescription("List every migration of this release, applied or pending"),
    Command.provide(database(true))
  )

const apply = Command.make("apply", {}, () =>
  Effect.gen(function*() {
    const applied = yield* SchemaMigrations.run
    if (applied.length === 0) return yield* Console.log("Nothing to apply: every migration is recorded")
    for (const [id, name] of applied) yield* Console.log(`Applied ${migrationName(id, name)}`)
  })).pipe(
    Command.withDescription("Run the pending migrations, each in its own transaction"),
    Command.provide(database(false))
  )

/** The command and its subcommands. */
export const command = Command.make("migrate").pipe(
  Command.withDescription(
    "The store's schema migrations, on the configured store (STORE, DATABASE_URL, DATA_DIR, as for the service)"
  ),
  Command.withSubcommands([status, apply])
)
