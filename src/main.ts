/**
 * The composition root: reads the configuration, picks the adapters and serves the
 * HTTP API. The only module that chooses adapters.
 *
 * Its imports are dynamic, after the embedded store has begun to open: ESM loads a
 * module's whole static graph before it runs any of it, and loading the service takes
 * about as long as opening PGlite on its thread, so begun first the two overlap. Effect's
 * modules are imported one by one, not through a barrel such as `effect`: a barrel
 * imported dynamically is its whole namespace, which no bundler can trim.
 */
import type { Deferred as DeferredType, LogLevel } from "effect"
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import * as EmbeddedOpening from "./adapters/embedded/EmbeddedOpening.ts"
import type { AppConfig } from "./AppConfig.ts"

// The store AppConfig picks, guessed from the same variables before Effect is loaded. A
// wrong guess costs only time: an opening the configuration does not use is released.
const env = process.env
const embeddedOpening = (env["STORE"] ?? (env["DATABASE_URL"] === undefined ? "embedded" : "postgres")) === "embedded"
  ? EmbeddedOpening.begin(env["DATA_DIR"] ?? "./data")
  : undefined

const [
  NodeRuntime,
  Cause,
  Config,
  Console,
  Deferred,
  Duration,
  Effect,
  Exit,
  Layer,
  Option,
  Predicate,
  Redacted,
  References,
  Schema,
  Scope,
  HttpMiddleware,
  HttpRouter,
  RateLimiter,
  ApiKeyAdminLocal,
  ApiKeysCached,
  HttpApp,
  NodeServer,
  { ROUTER_CONFIG },
  JsonLogLines,
  StoreMetrics,
  Tracing,
  RateLimiterStoreMemory,
  RateLimitsTokenBucket,
  { AppConfig: appConfig },
  { InvalidInput },
  { IdempotentCreates },
  ReleaseDeadline
] = await Promise.all([
  import("@effect/platform-node/NodeRuntime"),
  import("effect/Cause"),
  import("effect/Config"),
  import("effect/Console"),
  import("effect/Deferred"),
  import("effect/Duration"),
  import("effect/Effect"),
  import("effect/Exit"),
  import("effect/Layer"),
  import("effect/Option"),
  import("effect/Predicate"),
  import("effect/Redacted"),
  import("effect/References"),
  import("effect/Schema"),
  import("effect/Scope"),
  import("effect/http/HttpMiddleware"),
  import("effect/http/HttpRouter"),
  import("effect/persistence/RateLimiter"),
  import("./adapters/apikeys/ApiKeyAdminLocal.ts"),
  import("./adapters/apikeys/ApiKeysCached.ts"),
  import("./adapters/http/server/HttpApp.ts"),
  import("./adapters/http/server/NodeServer.ts"),
  import("./adapters/http/server/RouteTable.ts"),
  import("./adapters/observability/JsonLogLines.ts"),
  import("./adapters/observability/StoreMetrics.ts"),
  import("./adapters/observability/Tracing.ts"),
  import("./adapters/ratelimits/RateLimiterStoreMemory.ts"),
  import("./adapters/ratelimits/RateLimitsTokenBucket.ts"),
  import("./AppConfig.ts"),
  import("./domain/Errors.ts"),
  import("./ports/IdempotentCreates.ts"),
  import("./adapters/ReleaseDeadline.ts")
])

/** The opening begun at start-up, when the configuration picked the store it opens. */
const openingFor = (config: AppConfig): EmbeddedOpening.Opening | undefined =>
  config.store === "embedded" && embeddedOpening?.dataDir === Path.resolve(config.dataDir) ? embeddedOpening : undefined

// What each bounded release (ReleaseDeadline) is called in the log when it does not finish.
const EMBEDDED_DATABASE = "the embedded database (PGlite and its thread)"

// Adopted by the store or not, it is released before the process ends (a no-op after the store has).
const releaseOpening = Effect.tryPromise(() => embeddedOpening?.release() ?? Promise.resolve()).pipe(
  Effect.ignore({ log: "Warn", message: "Closing the embedded database opened at start-up failed" }),
  ReleaseDeadline.bound(EMBEDDED_DATABASE)
)

// How often a PostgreSQL instance checks that its database still records its migrations:
// a lost schema stops it after two checks in a row (Migrations.watch), within 4 s.
const SCHEMA_CHECK_EVERY = Duration.seconds(2)
type SchemaLost = DeferredType.Deferred<never, Error>

// Each store's modules are loaded only when it is picked: the memory store never loads
// the PostgreSQL driver, and neither loads PGlite. Pets, orders, API keys and the answers
// of idempotent creates share the store: an order and its pet change together, and a
// create and its kept answer are written in one transaction. A PostgreSQL database can be
// replaced under the instance; `schemaLost` fails once its schema is seen gone.
const store = (config: AppConfig, schemaLost: SchemaLost) => Layer.unwrap(Effect.promise(async () => {
  if (config.store === "memory") {
    const [StoreMemory, ApiKeyStoreMemory] = await Promise.all([
      import("./adapters/memory/StoreMemory.ts"),
      import("./adapters/memory/keys/ApiKeyStoreMemory.ts")
    ])
    return Layer.mergeAll(StoreMemory.layer, ApiKeyStoreMemory.layer)
  }
  const [PetRepositorySql, OrderRepositorySql, IdempotentCreatesSql, ApiKeyStoreSql] = await Promise.all([
    import("./adapters/postgres/PetRepositorySql.ts"),
    import("./adapters/postgres/OrderRepositorySql.ts"),
    import("./adapters/postgres/IdempotentCreatesSql.ts"),
    import("./adapters/postgres/keys/ApiKeyStoreSql.ts")
  ])
  const options = { timeout: config.databaseStatementTimeout }
  const sql = Layer.mergeAll(
    // PGlite's one connection carries every call's statements (see PetRepositorySql.Options).
    PetRepositorySql.layer({ ...options, sharedConnection: config.store === "embedded" }),
    OrderRepositorySql.layer(options),
    IdempotentCreatesSql.layer(options),
    // Other instances' key changes arrive through LISTEN; on PGlite this process makes them all.
    ApiKeyStoreSql.layer({ ...options, listen: config.store === "postgres" })
  )
  if (config.store === "embedded") {
    const EmbeddedDatabase = await import("./adapters/embedded/EmbeddedDatabase.ts")
    return sql.pipe(Layer.provide(
      ReleaseDeadline.layer(EMBEDDED_DATABASE)(EmbeddedDatabase.layer({ dataDir: config.dataDir, opening: openingFor(config) }))
    ))
  }
  const [PostgresClient, Migrations] = await Promise.all([
    import("./adapters/postgres/PostgresClient.ts"),
    import("./adapters/postgres/Migrations.ts")
  ])
  // The instance stops rather than migrate under whoever replaced the database (a restore
  // may still be running): its supervisor restarts it, and the start migrates.
  const schemaWatch = Layer.effectDiscard(Effect.forkScoped(
    Migrations.watch({ every: SCHEMA_CHECK_EVERY, timeout: config.databaseStatementTimeout }).pipe(
      Effect.catch((lost) =>
        Deferred.fail(schemaLost, new Error(`${lost.message}; stopping, so that a restart migrates it`)))
    )
  )).pipe(Layer.provide(Migrations.layer))
  return Layer.unwrap(Effect.map(
    Effect.fromOption(config.databaseUrl).pipe(
      Effect.mapError(() => new Error("STORE=postgres needs DATABASE_URL"))
    ),
    (url) =>
      Layer.mergeAll(sql, schemaWatch).pipe(Layer.provide(ReleaseDeadline.layer("the PostgreSQL connection pool")(PostgresClient.layer({
        url,
        poolSize: config.databasePoolSize,
        connectTimeout: config.databaseConnectTimeout,
        statementTimeout: config.databaseStatementTimeout
      }))))
  ))
}))

// Managed keys plus API_KEYS. With no key at all, a run still has to be usable: the
// memory store makes one up per run and says it once; a durable store issues one the
// first time and keeps it (only its digest), so the key stays valid across restarts.
// The embedded store writes that key to a file in DATA_DIR (owner only) and says where:
// stderr too is often collected and shipped, and a key kept for good must not travel.
const apiKeys = (config: AppConfig) =>
  Layer.unwrap(Effect.gen(function*() {
    if (config.apiKeys.length > 0) return ApiKeysCached.layer(config.apiKeys)
    if (config.store === "memory") {
      const key = randomBytes(24).toString("base64url")
      // On stderr, for the operator: the stdout log stream is collected and shipped, and never holds a key.
      yield* Console.error(`No API_KEYS set. This run accepts one generated key: ${key}`)
      return ApiKeysCached.layer([Redacted.make(key)])
    }
    const issued = yield* ApiKeyAdminLocal.bootstrap
    if (Option.isSome(issued) && config.store === "embedded") {
      const BootstrapKeyFile = yield* Effect.promise(() => import("./adapters/apikeys/BootstrapKeyFile.ts"))
      const file = yield* BootstrapKeyFile.write(config.dataDir, issued.value.key)
      yield* Console.error(
        `No API key existed, so this store issued one write key, written to ${file} (readable by its owner ` +
          `only; store the key elsewhere and delete the file; manage keys with animal-store-keys)`
      )
    } else if (Option.isSome(issued)) {
      yield* Console.error(
        `No API key existed, so this store issued one write key, shown only now: ${
          Redacted.value(issued.value.key)
        } (manage keys with animal-store-keys)`
      )
    }
    return ApiKeysCached.layer([])
  }))

// The embedded store is one process per data directory, so key management while the
// service runs goes through it: admin routes on a loopback-only port, found through a
// file in DATA_DIR that holds a fresh token.
const adminServer = (config: AppConfig) =>
  config.store !== "embedded" ? Layer.empty : Layer.unwrap(Effect.promise(async () => {
    const [AdminRoutes, AdminFile, NodeHttpServer, Http] = await Promise.all([
      import("./adapters/http/admin/AdminRoutes.ts"),
      import("./adapters/http/admin/AdminFile.ts"),
      import("@effect/platform-node/NodeHttpServer"),
      import("node:http")
    ])
    const token = Redacted.make(randomBytes(32).toString("base64url"))
    return Layer.mergeAll(AdminRoutes.layer(token), AdminFile.layer(config.dataDir, token)).pipe(
      Layer.provide(ApiKeyAdminLocal.layer),
      Layer.provide(NodeHttpServer.layer(Http.createServer, { port: config.adminPort, host: "127.0.0.1" }))
    )
  }))

// What the HTTP app needs, over one store: both repositories measured, idempotent creates,
// the key check, and the embedded store's admin port.
const services = (config: AppConfig, schemaLost: SchemaLost) =>
  Layer.mergeAll(
    StoreMetrics.petRepository,
    StoreMetrics.orderRepository,
    Layer.effect(IdempotentCreates, Effect.service(IdempotentCreates)),
    apiKeys(config),
    adminServer(config)
  ).pipe(Layer.provide(store(config, schemaLost)), ReleaseDeadline.layerPhase("the release of the store and the API keys"))

// Buckets in this process, or in Redis so that every instance shares them. A Redis that
// stops answering costs a request at most REDIS_TIMEOUT before it goes on unlimited, and
// only until the adapter's circuit opens (RateLimitsTokenBucket.CIRCUIT_FAILURES in a row);
// node-redis's own reconnect warnings are muted, the adapter says it once per outage.
const REDIS_TIMEOUT = Duration.millis(250)
const rateLimiterStore = (config: AppConfig) =>
  Option.match(config.redisUrl, {
    onNone: () => RateLimiterStoreMemory.layer,
    // node-redis is loaded only when Redis is used.
    onSome: (url) =>
      Layer.unwrap(Effect.promise(async () => {
        const NodeRedis = await import("@effect/platform-node/NodeRedis")
        return RateLimiter.layerStoreRedis({ prefix: "animal-store:ratelimit:" }).pipe(
          Layer.provide(ReleaseDeadline.layer("the Redis client")(
            NodeRedis.layer({ url: Redacted.value(url), disableOfflineQueue: true })
          )),
          Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error")),
          Layer.catchTag("RedisError", (error) =>
            Layer.effect(
              RateLimiter.RateLimiterStore,
              Effect.fail(new Error("REDIS_URL: Redis does not answer", { cause: error.cause }))
            ))
        )
      }))
  })

const rateLimits = (config: AppConfig) =>
  Option.match(Option.zipWith(config.rateLimit, config.rateLimitAddress, (key, address) => ({ key, address })), {
    onNone: () => Layer.empty,
    onSome: ({ address, key }) =>
      RateLimitsTokenBucket.layer({
        policies: { key: { name: "key", ...key }, address: { name: "address", ...address } },
        timeout: Option.isSome(config.redisUrl) ? REDIS_TIMEOUT : undefined
      }).pipe(
        Layer.provide(RateLimiter.layer),
        Layer.provide(rateLimiterStore(config)),
        ReleaseDeadline.layerPhase("the release of the rate limits")
      )
  })

const LOG_LEVELS: Record<AppConfig["logLevel"], LogLevel.LogLevel> = {
  all: "All",
  fatal: "Fatal",
  error: "Error",
  warn: "Warn",
  info: "Info",
  debug: "Debug",
  trace: "Trace",
  none: "None"
}

// "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:5432": each cause's message, once.
const causeChain = (error: unknown): string | undefined => {
  const messages: Array<string> = []
  for (let current = error; Predicate.hasProperty(current, "message") && messages.length < 5;) {
    const message = String(current.message)
    if (message !== "" && !messages.some((seen) => seen.includes(message))) messages.push(message)
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return messages.length === 0 ? undefined : messages.join(": ")
}

// A shutdown answers the requests it accepted within DRAIN_TIMEOUT (those still running
// then are interrupted and answered 503, within ReleaseDeadline.TIMEOUT more), then
// gives each resource ReleaseDeadline.TIMEOUT to close. Should the shutdown still be
// running SHUTDOWN_TIMEOUT after the signal, the process exits 1 regardless, naming the
// releases under way or, with none, the step it is in (ReleaseDeadline.unfinished).
const DRAIN_TIMEOUT = Duration.seconds(10)
const SHUTDOWN_TIMEOUT = Duration.sum(DRAIN_TIMEOUT, Duration.seconds(5))
const exitAtShutdownTimeout = () =>
  setTimeout(() => {
    // Written at once, not through the batched logger: the next statement ends the process.
    process.stdout.write(`${
      JSON.stringify({
        message: `shutdown did not finish within ${Duration.format(SHUTDOWN_TIMEOUT)}; exiting`,
        level: "ERROR",
        timestamp: new Date().toISOString(),
        annotations: { "not.closed": ReleaseDeadline.unfinished().join("; ") }
      })
    }\n`)
    process.exit(1)
  }, Duration.toMillis(SHUTDOWN_TIMEOUT)).unref()

// runMain turns SIGTERM and SIGINT into an interruption; which signal it was is for the log.
// Registered before runMain's own listeners, so it is known when the interruption runs.
let stopSignal: NodeJS.Signals | undefined
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    stopSignal ??= signal
    exitAtShutdownTimeout()
  })
}

// Start-up, serving and shutdown, each step a line of the JSON log.
const serve = (config: AppConfig) => Effect.gen(function*() {
  yield* Effect.logInfo("starting").pipe(Effect.annotateLogs({
    store: config.store,
    ...(config.store === "embedded" ? { "store.directory": config.dataDir } : {}),
    address: `http://${config.host}:${config.port}`,
    api: `http://${config.host}:${config.port}/v1`,
    docs: `http://${config.host}:${config.port}/docs`
  }))
  let drained = 0
  const schemaLost = yield* Deferred.make<never, Error>()
  // HttpApp writes each request's log line itself, with its id and route.
  const app = HttpApp.layer(
    { production: config.publicBaseUrl, staging: config.stagingBaseUrl },
    { metrics: config.metrics === "on", cors: config.corsOrigins }
  )
  // Only behind a trusted proxy is X-Forwarded-For believed (the client address of rate limits).
  const forwarded = config.trustProxy.length > 0
    ? HttpMiddleware.xForwardedHeaders({ trustedProxies: config.trustProxy })
    : undefined
  const server = HttpRouter.serve(app, {
    disableLogger: true,
    routerConfig: ROUTER_CONFIG,
    ...(forwarded === undefined ? {} : { middleware: (effect) => forwarded(effect) })
  })
    .pipe(
      // Its release is the drain, and the interruption of what outlasts it.
      ReleaseDeadline.layer("the requests in flight", Duration.sum(DRAIN_TIMEOUT, ReleaseDeadline.TIMEOUT)),
      Layer.provide([services(config, schemaLost), rateLimits(config)]),
      Layer.provide(ReleaseDeadline.layerPhase("the tracer's last export")(Tracing.layer)),
      Layer.provide(ReleaseDeadline.layerPhase("the close of the HTTP server")(NodeServer.layer({
        port: config.port,
        host: config.host,
        shutdownTimeout: DRAIN_TIMEOUT,
        onDrained: (requests) => drained = requests
      })))
    )
  // Layer.launch, with a line at each step: the layer is built once the server listens
  // with the application attached; an interruption says "stopping" before the drain.
  return yield* Effect.acquireUseRelease(
    Scope.make(),
    (scope) =>
      Effect.gen(function*() {
        yield* Layer.build(server)
        yield* Effect.logInfo("ready")
        return yield* Deferred.await(schemaLost).pipe(
          Effect.tapError((error) => Effect.logError(error.message)),
          Effect.onInterrupt(() => Effect.logInfo("stopping").pipe(Effect.annotateLogs({ signal: stopSignal ?? "none" })))
        )
      }).pipe(Scope.provide(scope)),
    // The steps of the shutdown name themselves; between them, this names it.
    (scope, exit) => ReleaseDeadline.phase("the release of the service")(Scope.close(scope, exit))
  ).pipe(
    Effect.onExit(() => Effect.logInfo("stopped").pipe(Effect.annotateLogs({ "requests.drained": drained })))
  )
})

const main = Effect.gen(function*() {
  const config = yield* appConfig
  // Not picked, it holds a thread and a lock for nothing.
  if (embeddedOpening !== undefined && openingFor(config) === undefined) yield* Effect.forkDetach(releaseOpening)
  return yield* serve(config).pipe(Effect.provideService(References.MinimumLogLevel, LOG_LEVELS[config.logLevel]))
}).pipe(
  // A startup failure gets one plain line (no stack) and exit code 1.
  Effect.tapCause((cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.void
    const error = Cause.squash(cause)
    const message = error instanceof Config.ConfigError && Schema.isSchemaError(error.cause)
      ? `invalid configuration: ${InvalidInput.fromIssue(error.cause.issue).message}`
      : causeChain(error) ?? Cause.pretty(cause)
    return Console.error(`Animal Store stopped: ${message}`)
  }),
  Effect.ensuring(releaseOpening),
  Effect.provide(JsonLogLines.layer)
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  // SIGTERM/SIGINT interrupt the server, which stops accepting and drains: a clean exit.
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
})
