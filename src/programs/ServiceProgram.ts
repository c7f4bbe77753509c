/**
 * `animal-store serve`: reads the configuration, picks the adapters (the store's in
 * StoreWiring, the service's own in ServiceWiring) and serves the HTTP API until a
 * signal stops it. main.ts loads this module once it has begun opening the embedded
 * store, so that loading the service and opening PGlite on its thread overlap (they take
 * about as long); the command line's `serve` loads it too.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Config, Deferred, Duration, Effect, Exit, Layer, References, Scope } from "effect"
import { HttpMiddleware, HttpRouter } from "effect/http"
import type * as EmbeddedOpening from "../adapters/embedded/EmbeddedOpening.ts"
import * as EventFanout from "../adapters/http/server/events/EventFanout.ts"
import * as HttpApp from "../adapters/http/server/HttpApp.ts"
import * as NodeServer from "../adapters/http/server/process/NodeServer.ts"
import * as RouteTable from "../adapters/http/server/routing/RouteTable.ts"
import * as JsonLogLines from "../adapters/observability/JsonLogLines.ts"
import * as Tracing from "../adapters/observability/Tracing.ts"
import * as ReleaseDeadline from "../adapters/process/ReleaseDeadline.ts"
import * as FailureReport from "./FailureReport.ts"
import * as ServiceConfig from "./ServiceConfig.ts"
import * as ServiceWiring from "./ServiceWiring.ts"
import * as StoreConfig from "./StoreConfig.ts"
import * as StoreWiring from "./StoreWiring.ts"

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
// Put before runMain's own listeners, so it is known when the interruption runs.
let stopSignal: NodeJS.Signals | undefined
const watchSignals = Effect.sync(() => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.prependOnceListener(signal, () => {
      stopSignal ??= signal
      exitAtShutdownTimeout()
    })
  }
})

// Start-up, serving and shutdown, each step a line of the JSON log.
const serve = (
  store: StoreConfig.StoreConfig,
  service: ServiceConfig.ServiceConfig,
  embeddedOpening: EmbeddedOpening.Opening | undefined
) => Effect.gen(function*() {
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
      events: { ...EventFanout.DEFAULTS, heartbeat: service.eventsHeartbeat, maxStreams: service.eventsMaxStreams },
      photos: { maxBytes: service.photoMaxBytes, urls: { ttl: service.photoUrlTtl, secrets: service.photoUrlSecrets } }
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

/**
 * The service, until a signal stops it, on the store the configuration picks; `opening`,
 * the embedded store's opening main.ts began, is adopted when it is of that store and
 * released in any case. Its failure is for the caller to report (FailureReport.SERVICE_STOPPED).
 */
export const program = (embeddedOpening: EmbeddedOpening.Opening | undefined): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    yield* watchSignals
    const [store, service] = yield* Config.all([StoreConfig.StoreConfig, ServiceConfig.ServiceConfig])
    // Not picked, it holds a thread and a lock for nothing.
    if (embeddedOpening !== undefined && !StoreWiring.adopts(store, embeddedOpening)) {
      yield* Effect.forkDetach(StoreWiring.releaseOpening(embeddedOpening))
    }
    return yield* serve(store, service, embeddedOpening).pipe(Effect.provideService(References.MinimumLogLevel, service.logLevel))
  }).pipe(
    // Adopted by the store or not, the opening is released before the process ends.
    Effect.ensuring(StoreWiring.releaseOpening(embeddedOpening)),
    Effect.provide(JsonLogLines.layer)
  )

/** Whether a run of the service that ended with `exit` ended well: a signal's interruption is a clean stop. */
export const stoppedCleanly = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)

/** Runs the service as the process's main program (`animal-store serve`). */
export const run = (embeddedOpening: EmbeddedOpening.Opening | undefined): void =>
  // A startup failure gets one plain line (no stack) and exit code 1.
  NodeRuntime.runMain(program(embeddedOpening).pipe(Effect.tapCause(FailureReport.report(FailureReport.SERVICE_STOPPED))), {
    disableErrorReporting: true,
    // SIGTERM/SIGINT interrupt the server, which stops accepting and drains: a clean exit.
    teardown: (exit, onExit) => onExit(stoppedCleanly(exit) ? 0 : 1)
  })
