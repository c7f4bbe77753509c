/**
 * The composition root: reads the configuration, picks the adapters and serves the
 * HTTP API. With the commands' programs beside its wiring in programs/, the only module
 * that chooses adapters: the store's in StoreWiring, the service's own in ServiceWiring.
 *
 * Its imports are dynamic, after the embedded store has begun to open: ESM loads a
 * module's whole static graph before it runs any of it, and loading the service takes
 * about as long as opening PGlite on its thread, so begun first the two overlap. Effect's
 * modules are imported one by one, not through a barrel such as `effect`: a barrel
 * imported dynamically is its whole namespace, which no bundler can trim.
 *
 * Effect's schema compiler is installed first, before any schema is built: each decoder
 * and constructor is then compiled to plain functions on first use, and a value that
 * passes is decoded with no fiber (a failure is explained by the interpreter, with the
 * same issue). Decoding a 20-row page of pets fell from 13–24 µs to 5.3–13 µs.
 */
import "effect/schema/SchemaJITCompiler/enable"
import "./programs/EnvFile.ts"
import * as EmbeddedOpening from "./adapters/embedded/EmbeddedOpening.ts"
import type * as ServiceConfigModule from "./programs/ServiceConfig.ts"
import type * as StoreConfigModule from "./programs/StoreConfig.ts"
import * as StoreDefaults from "./programs/StoreDefaults.ts"

// The store StoreConfig picks, guessed from the same variables and defaults before Effect
// is loaded. A wrong guess costs only time: an opening the configuration does not use is released.
const env = process.env
const embeddedOpening =
  (env["STORE"] ?? StoreDefaults.storeKindWhenUnset(env["DATABASE_URL"] !== undefined)) === "embedded"
    ? EmbeddedOpening.begin(env["DATA_DIR"] ?? StoreDefaults.DATA_DIR)
    : undefined

/** Each module of `modules` once all have loaded, by name; loaded side by side. */
const loaded = async <Modules extends Record<string, Promise<unknown>>>(
  modules: Modules
): Promise<{ readonly [Name in keyof Modules]: Awaited<Modules[Name]> }> =>
  Object.fromEntries(await Promise.all(Object.entries(modules).map(async ([name, module]) => [name, await module])))

const effect = loaded({
  Cause: import("effect/Cause"),
  Config: import("effect/Config"),
  Deferred: import("effect/Deferred"),
  Duration: import("effect/Duration"),
  Effect: import("effect/Effect"),
  Exit: import("effect/Exit"),
  Layer: import("effect/Layer"),
  References: import("effect/References"),
  Scope: import("effect/Scope"),
  HttpMiddleware: import("effect/http/HttpMiddleware"),
  HttpRouter: import("effect/http/HttpRouter"),
  NodeRuntime: import("@effect/platform-node/NodeRuntime")
})
const adapters = loaded({
  HttpApp: import("./adapters/http/server/HttpApp.ts"),
  EventFanout: import("./adapters/http/server/events/EventFanout.ts"),
  NodeServer: import("./adapters/http/server/process/NodeServer.ts"),
  RouteTable: import("./adapters/http/server/routing/RouteTable.ts"),
  JsonLogLines: import("./adapters/observability/JsonLogLines.ts"),
  Tracing: import("./adapters/observability/Tracing.ts"),
  ReleaseDeadline: import("./adapters/process/ReleaseDeadline.ts")
})
const roots = loaded({
  FailureReport: import("./programs/FailureReport.ts"),
  ServiceConfig: import("./programs/ServiceConfig.ts"),
  ServiceWiring: import("./programs/ServiceWiring.ts"),
  StoreConfig: import("./programs/StoreConfig.ts"),
  StoreWiring: import("./programs/StoreWiring.ts")
})
const { Cause, Config, Deferred, Duration, Effect, Exit, HttpMiddleware, HttpRouter, Layer, NodeRuntime, References, Scope } =
  await effect
const { EventFanout, HttpApp, JsonLogLines, NodeServer, ReleaseDeadline, RouteTable, Tracing } = await adapters
const { FailureReport, ServiceConfig, ServiceWiring, StoreConfig, StoreWiring } = await roots

// A shutdown answers the requests it accepted within DRAIN_TIMEOUT (those still running
// then are interrupted and answered 503, within ReleaseDeadline.TIMEOUT more), then
// gives each resource ReleaseDeadline.TIMEOUT to close. Should the shutdown still be
// running SHUTDOWN_TIMEOUT after the signal, the process exits 1 regardless, naming the
// releases under way or, with none, the step it is in (ReleaseDeadline.unfinished).
const DRAIN_TIMEOUT = Duration.seconds(10)
const SHUTDOWN_TIMEOUT = Duration.sum(DRAIN_TIMEOUT, Duration.seconds(5))
const exitAtShutdownTimeout = () =>
  setTimeout(() => {
    // Through the service's logger; process.exit writes it, and every line still pending.
    Effect.runSync(
      Effect.logError(`shutdown did not finish within ${Duration.format(SHUTDOWN_TIMEOUT)}; exiting`).pipe(
        Effect.annotateLogs({ "not.closed": ReleaseDeadline.unfinished().join("; ") }),
        Effect.provide(JsonLogLines.layer)
      )
    )
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
const serve = (store: StoreConfigModule.StoreConfig, service: ServiceConfigModule.ServiceConfig) => Effect.gen(function*() {
  const address = `http://${service.host}:${service.port}`
  yield* Effect.logInfo("starting").pipe(Effect.annotateLogs({
    store: store.store,
    ...(store.store === "embedded" ? { "store.directory": store.dataDir } : {}),
    address,
    api: `${address}/v1`,
    docs: `${address}/docs`
  }))
  let drained = 0
  // Failed by the schema watch once a PostgreSQL database is seen replaced.
  const schemaLost = yield* Deferred.make<never, Error>()
  const ports = StoreWiring.ports(store, { listen: true, opening: embeddedOpening, schemaLost })
  // HttpApp writes each request's log line itself, with its id and route.
  const app = HttpApp.layer(
    { production: service.publicBaseUrl, staging: service.stagingBaseUrl },
    {
      metrics: service.metrics === "on",
      cors: service.corsOrigins,
      webhookAllowPrivate: service.webhookAllowPrivate,
      events: { ...EventFanout.DEFAULTS, heartbeat: service.eventsHeartbeat, maxStreams: service.eventsMaxStreams }
    }
  )
  // Only behind a trusted proxy is X-Forwarded-For believed (the client address of rate limits).
  const forwarded = service.trustProxy.length > 0
    ? HttpMiddleware.xForwardedHeaders({ trustedProxies: service.trustProxy })
    : undefined
  const server = HttpRouter.serve(app, {
    disableLogger: true,
    routerConfig: RouteTable.ROUTER_CONFIG,
    ...(forwarded === undefined ? {} : { middleware: (effect) => forwarded(effect) })
  }).pipe(
    // Its release is the drain, and the interruption of what outlasts it.
    ReleaseDeadline.layer("the requests in flight", Duration.sum(DRAIN_TIMEOUT, ReleaseDeadline.TIMEOUT)),
    Layer.provide([
      ServiceWiring.services(store, service).pipe(
        Layer.provide(ports),
        ReleaseDeadline.layerPhase("the release of the store and the API keys")
      ),
      ServiceWiring.rateLimits(service).pipe(ReleaseDeadline.layerPhase("the release of the rate limits"))
    ]),
    Layer.provide(ReleaseDeadline.layerPhase("the tracer's last export")(Tracing.layer)),
    Layer.provide(ReleaseDeadline.layerPhase("the close of the HTTP server")(NodeServer.layer({
      port: service.port,
      host: service.host,
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
  const [store, service] = yield* Config.all([StoreConfig.StoreConfig, ServiceConfig.ServiceConfig])
  // Not picked, it holds a thread and a lock for nothing.
  if (embeddedOpening !== undefined && !StoreWiring.adopts(store, embeddedOpening)) yield* Effect.forkDetach(StoreWiring.releaseOpening(embeddedOpening))
  return yield* serve(store, service).pipe(Effect.provideService(References.MinimumLogLevel, service.logLevel))
}).pipe(
  // A startup failure gets one plain line (no stack) and exit code 1.
  Effect.tapCause(FailureReport.report("Animal Store stopped")),
  // Adopted by the store or not, the opening is released before the process ends.
  Effect.ensuring(StoreWiring.releaseOpening(embeddedOpening)),
  Effect.provide(JsonLogLines.layer)
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  // SIGTERM/SIGINT interrupt the server, which stops accepting and drains: a clean exit.
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
})
