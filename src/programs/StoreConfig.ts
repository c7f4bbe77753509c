import { Config, Duration, Option, Schema } from "effect"
import * as StoreDefaults from "./StoreDefaults.ts"

// An S3-compatible server's address, as the SDK takes it.
const S3Endpoint = Schema.String.check(Schema.makeFilter(
  (url: string) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol),
  { message: "must be an absolute http(s) URL, e.g. http://minio:9000" }
))

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
  migrate: Config.schema(Schema.Literals(["on", "off"]), "MIGRATE").pipe(Config.withDefault("on" as const)),
  // Where photos' bytes live: `store`, the store's own (memory, or the database's
  // photo_blobs table); `s3`, a bucket of an S3-compatible object store.
  photoStore: Config.schema(Schema.Literals(["store", "s3"]), "PHOTO_STORE").pipe(Config.withDefault("store" as const)),
  // None: AWS S3 itself, by region.
  s3Endpoint: Config.schema(S3Endpoint, "S3_ENDPOINT").pipe(Config.option),
  s3Bucket: Config.String("S3_BUCKET").pipe(Config.option),
  s3Region: Config.String("S3_REGION").pipe(Config.withDefault("us-east-1")),
  s3Timeout: Config.Duration("S3_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10)))
}).pipe(
  Config.map((config) => ({
    ...config,
    store: Option.getOrElse(config.store, () => StoreDefaults.storeKindWhenUnset(Option.isSome(config.databaseUrl)))
  }))
)
/** The parsed store settings. */
export type StoreConfig = Config.Success<typeof StoreConfig>
