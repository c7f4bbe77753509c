import { Config, Duration, Option, Schema } from "effect"
import * as StoreDefaults from "./StoreDefaults.ts"

/**
 * The store's settings, read from the environment: all that the keys command reads, so
 * that no HTTP setting can stop it. Each has a default except the database URL, which
 * only the postgres store needs; with nothing set the store is the embedded one.
 */
export const StoreConfig = Config.all({
  store: Config.schema(Schema.Literals(StoreDefaults.STORE_KINDS), "STORE").pipe(Config.option),
  databaseUrl: Config.Redacted("DATABASE_URL").pipe(Config.option),
  databasePoolSize: Config.schema(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1, { message: "must be an integer of at least 1" })),
    "DATABASE_POOL_SIZE"
  ).pipe(Config.withDefault(10)),
  databaseConnectTimeout: Config.Duration("DATABASE_CONNECT_TIMEOUT").pipe(Config.withDefault(Duration.seconds(5))),
  databaseStatementTimeout: Config.Duration("DATABASE_STATEMENT_TIMEOUT").pipe(Config.withDefault(Duration.seconds(5))),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault(StoreDefaults.DATA_DIR)),
  // off: the schema is migrated beforehand (`npm run migrate -- apply`); a start only checks it.
  migrate: Config.schema(Schema.Literals(["on", "off"]), "MIGRATE").pipe(Config.withDefault("on" as const))
}).pipe(
  Config.map((config) => ({
    ...config,
    store: Option.getOrElse(config.store, () => StoreDefaults.storeKindWhenUnset(Option.isSome(config.databaseUrl)))
  }))
)
/** The parsed store settings. */
export type StoreConfig = Config.Success<typeof StoreConfig>
