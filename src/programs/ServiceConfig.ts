import { Config, Duration, type LogLevel, Option, Redacted, Result, Schema, SchemaTransformation } from "effect"
import { IpNetwork } from "effect/net"
import * as EventFanout from "../adapters/http/server/events/EventFanout.ts"
import * as HttpApp from "../adapters/http/server/HttpApp.ts"
import * as PhotoProcessorOptions from "../adapters/images/PhotoProcessorOptions.ts"

const LOG_LEVEL_NAMES = ["all", "fatal", "error", "warn", "info", "debug", "trace", "none"] as const
// The log level each of LOG_LEVEL's values stands for.
const LOG_LEVELS: Record<typeof LOG_LEVEL_NAMES[number], LogLevel.LogLevel> = {
  all: "All",
  fatal: "Fatal",
  error: "Error",
  warn: "Warn",
  info: "Info",
  debug: "Debug",
  trace: "Trace",
  none: "None"
}

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

// "200/2s": a bucket of 200 requests that regains 200 every 2 seconds; also 100/s, 6000/m, 10000/h.
const RATE = /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,5})?([smh])$/
const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const

/** A rate limit as a quota and its window, or none ("off"). */
export interface RateLimitSetting {
  readonly quota: number
  readonly windowSeconds: number
}

const RateLimitSpec = (allowOff: boolean) =>
  Schema.String.check(Schema.makeFilter(
    (spec: string) => (allowOff && spec === "off") || RATE.test(spec),
    { message: `must be ${allowOff ? `"off" or ` : ""}<requests>/<window> such as 200/2s, 100/s or 6000/m` }
  ))

// The per-address limit cannot be off alone: it is what keeps a flood of guessed keys cheap.
const rateLimit = (name: string, fallback: string, allowOff: boolean) =>
  Config.schema(RateLimitSpec(allowOff), name).pipe(
    Config.withDefault(fallback),
    Config.map((spec): Option.Option<RateLimitSetting> => {
      const match = RATE.exec(spec)
      if (match === null) return Option.none()
      const [, quota, count, unit] = match as unknown as [string, string, string | undefined, keyof typeof UNIT_SECONDS]
      return Option.some({ quota: Number(quota), windowSeconds: Number(count ?? 1) * UNIT_SECONDS[unit] })
    })
  )

// Comma-separated addresses or CIDR networks of the proxies whose X-Forwarded-For is believed.
const TrustedProxies = Schema.String.check(Schema.makeFilter(
  (list: string) => list.split(",").every((entry) => Result.isSuccess(IpNetwork.fromString(networkOf(entry.trim())))),
  { message: "must be comma-separated IP addresses or networks, e.g. 10.0.0.0/8,127.0.0.1" }
))
const networkOf = (entry: string) => entry.includes("/") ? entry : `${entry}/${entry.includes(":") ? 128 : 32}`

/**
 * The service's settings (HTTP, CORS, limits, telemetry), read from the environment.
 * Each has a default or is off when unset. The store's are StoreConfig's.
 */
/**
 * WEBHOOK_ALLOW_PRIVATE=true: webhook URLs may be plain http and reach private addresses
 * (development and tests only). Read by the service and the webhooks command.
 */
export const WebhookAllowPrivate = Config.schema(Schema.Literals(["true", "false"]), "WEBHOOK_ALLOW_PRIVATE").pipe(
  Config.withDefault("false" as const),
  Config.map((value) => value === "true")
)

const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1, { message: "must be a whole number of at least 1" }))

export const ServiceConfig = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  apiKeys: Config.Redacted("API_KEYS").pipe(
    Config.map((keys) =>
      Redacted.value(keys).split(",").map((key) => key.trim()).filter((key) => key !== "").map((key) => Redacted.make(key))
    ),
    Config.withDefault([] as ReadonlyArray<Redacted.Redacted<string>>)
  ),
  adminPort: Config.schema(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }, { message: "must be a port number, or 0 for any free port" })),
    "ADMIN_PORT"
  ).pipe(Config.withDefault(0)),
  logLevel: Config.schema(Schema.Literals(LOG_LEVEL_NAMES), "LOG_LEVEL").pipe(
    Config.withDefault("info" as const),
    Config.map((name) => LOG_LEVELS[name])
  ),
  metrics: Config.schema(Schema.Literals(["on", "off"]), "METRICS").pipe(Config.withDefault("on" as const)),
  webhookAllowPrivate: WebhookAllowPrivate,
  // Unset, the OpenAPI document lists only the address it was served from.
  publicBaseUrl: Config.schema(BaseUrl, "PUBLIC_BASE_URL").pipe(Config.option, Config.map(Option.getOrUndefined)),
  stagingBaseUrl: Config.schema(BaseUrl, "STAGING_BASE_URL").pipe(Config.option, Config.map(Option.getOrUndefined)),
  corsOrigins: Config.schema(CorsOrigins, "CORS_ORIGINS").pipe(Config.option, Config.map(Option.getOrUndefined)),
  rateLimit: rateLimit("RATE_LIMIT", "200/2s", true),
  rateLimitAddress: rateLimit("RATE_LIMIT_ADDRESS", "20/10s", false),
  redisUrl: Config.Redacted("REDIS_URL").pipe(Config.option),
  // How long the event feed keeps an event; a cursor older than that answers 410 cursor_expired.
  eventsRetention: Config.Duration("EVENTS_RETENTION").pipe(Config.withDefault(Duration.days(7))),
  // How often an idle SSE stream sends a heartbeat comment.
  eventsHeartbeat: Config.Duration("EVENTS_HEARTBEAT").pipe(Config.withDefault(EventFanout.DEFAULTS.heartbeat)),
  // Server-Sent Events streams held at once; one more is answered 503. A held stream costs
  // 52 KB of RSS, about 70 KB while events flow (bench/sse.ts), and one file descriptor:
  // 10,000 is ten times the 1,000 an instance must hold, and bounds a flood of subscribers
  // to about 0.7 GB and to fewer descriptors than the usual hard limit (Node raises its
  // soft limit to it).
  eventsMaxStreams: Config.schema(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1, { message: "must be a whole number of at least 1" })),
    "EVENTS_MAX_STREAMS"
  ).pipe(Config.withDefault(EventFanout.DEFAULTS.maxStreams)),
  // How long an instance holds the webhook subscriptions it delivers to: after a kill, the
  // time before another instance (or the restarted one) takes them over.
  webhookLease: Config.Duration("WEBHOOK_LEASE").pipe(Config.withDefault(Duration.seconds(30))),
  trustProxy: Config.schema(TrustedProxies, "TRUST_PROXY").pipe(
    Config.map((list) => list.split(",").map((entry) => IpNetwork.fromStringUnsafe(networkOf(entry.trim())))),
    Config.withDefault([] as ReadonlyArray<IpNetwork.IpNetwork>)
  ),
  // The largest photo upload body, in bytes.
  photoMaxBytes: Config.schema(PositiveInt, "PHOTO_MAX_BYTES").pipe(Config.withDefault(HttpApp.PHOTO_DEFAULTS.maxBytes)),
  // The largest photo, in pixels (width × height): a decompression bomb declares more.
  photoMaxPixels: Config.schema(PositiveInt, "PHOTO_MAX_PIXELS").pipe(
    Config.withDefault(PhotoProcessorOptions.DEFAULTS.maxPixels)
  ),
  // How long a signed photo URL stays valid.
  photoUrlTtl: Config.Duration("PHOTO_URL_TTL").pipe(Config.withDefault(HttpApp.PHOTO_DEFAULTS.urls.ttl)),
  // The secrets that sign photo URLs, comma-separated: the first signs, all verify (a
  // rotation's overlap). Unset: the store's own, made once and shared by its instances.
  photoUrlSecrets: Config.Redacted("PHOTO_URL_SECRETS").pipe(
    Config.map((secrets) =>
      Redacted.value(secrets).split(",").map((secret) => secret.trim()).filter((secret) => secret !== "")
        .map((secret) => Redacted.make(secret))
    ),
    Config.withDefault([] as ReadonlyArray<Redacted.Redacted<string>>)
  )
})
/** The parsed service settings. */
export type ServiceConfig = Config.Success<typeof ServiceConfig>
