import { Config, Duration, Option, Redacted, Schema, SchemaTransformation } from "effect"

/** Which PetRepository adapter serves the catalogue. */
const StoreKind = Schema.Literals(["memory", "embedded", "postgres"])
/** A value of {@link StoreKind}. */
type StoreKind = typeof StoreKind.Type

const LOG_LEVELS = ["all", "fatal", "error", "warn", "info", "debug", "trace", "none"] as const

// A public base address must be absolute and end with the /v1 version segment, like the spec's.
const BaseUrl = Schema.String.check(Schema.makeFilter(
  (url: string) =>
    URL.canParse(url) && /^https?:$/.test(new URL(url).protocol) &&
    new URL(url).pathname.replace(/\/$/, "").endsWith("/v1"),
  { message: "must be an absolute http(s) URL ending in /v1" }
))

// An origin is exactly scheme://host[:port], as browsers send it in `Origin`.
const isOrigin = (origin: string) => URL.canParse(origin) && new URL(origin).origin === origin

// `*`, or a comma-separated list of origins; unset means no cross-origin access.
const CorsOrigins = Schema.String.pipe(
  Schema.decodeTo(
    Schema.Union([
      Schema.Literal("*"),
      Schema.Array(Schema.String.check(Schema.makeFilter(isOrigin, {
        message: "must be * or a comma-separated list of origins like https://app.example.com"
      })))
    ]),
    SchemaTransformation.transform({
      decode: (text: string): "*" | ReadonlyArray<string> =>
        text.trim() === "*" ? "*" : text.split(",").map((origin) => origin.trim()).filter((origin) => origin !== ""),
      encode: (origins: "*" | ReadonlyArray<string>) => origins === "*" ? "*" : origins.join(",")
    })
  )
)

/**
 * Every setting, read from the environment. Each has a default except the ones that
 * only matter for one store; `npm start` with nothing set runs the embedded store.
 */
export const AppConfig = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  apiKeys: Config.Redacted("API_KEYS").pipe(
    Config.map((keys) =>
      Redacted.value(keys).split(",").map((key) => key.trim()).filter((key) => key !== "").map((key) => Redacted.make(key))
    ),
    Config.withDefault([] as ReadonlyArray<Redacted.Redacted<string>>)
  ),
  store: Config.schema(StoreKind, "STORE").pipe(Config.option),
  databaseUrl: Config.Redacted("DATABASE_URL").pipe(Config.option),
  databasePoolSize: Config.schema(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1, { message: "must be an integer of at least 1" })),
    "DATABASE_POOL_SIZE"
  ).pipe(Config.withDefault(10)),
  databaseConnectTimeout: Config.Duration("DATABASE_CONNECT_TIMEOUT").pipe(Config.withDefault(Duration.seconds(5))),
  databaseStatementTimeout: Config.Duration("DATABASE_STATEMENT_TIMEOUT").pipe(Config.withDefault(Duration.seconds(5))),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./data")),
  adminPort: Config.schema(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }, { message: "must be a port number, or 0 for any free port" })),
    "ADMIN_PORT"
  ).pipe(Config.withDefault(0)),
  logLevel: Config.schema(Schema.Literals(LOG_LEVELS), "LOG_LEVEL").pipe(Config.withDefault("info" as const)),
  metrics: Config.schema(Schema.Literals(["on", "off"]), "METRICS").pipe(Config.withDefault("on" as const)),
  // Unset, the OpenAPI document lists only the address it was served from.
  publicBaseUrl: Config.schema(BaseUrl, "PUBLIC_BASE_URL").pipe(Config.option, Config.map(Option.getOrUndefined)),
  stagingBaseUrl: Config.schema(BaseUrl, "STAGING_BASE_URL").pipe(Config.option, Config.map(Option.getOrUndefined)),
  corsOrigins: Config.schema(CorsOrigins, "CORS_ORIGINS").pipe(Config.option, Config.map(Option.getOrUndefined))
}).pipe(
  Config.map((config) => ({
    ...config,
    // postgres when a database URL is given, the embedded database otherwise.
    store: Option.getOrElse(config.store, (): StoreKind => Option.isSome(config.databaseUrl) ? "postgres" : "embedded")
  }))
)
/** The parsed settings. */
export type AppConfig = Config.Success<typeof AppConfig>
