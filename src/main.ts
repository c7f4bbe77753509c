/**
 * The composition root: reads the configuration, picks the adapters and serves the
 * HTTP API. The only module that chooses adapters.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import {
  Cause,
  Config,
  Console,
  Duration,
  Effect,
  Exit,
  Layer,
  type LogLevel,
  Option,
  Predicate,
  Redacted,
  References,
  Schema
} from "effect"
import { HttpRouter } from "effect/http"
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import * as ApiKeyAdminLocal from "./adapters/apikeys/ApiKeyAdminLocal.ts"
import * as ApiKeysCached from "./adapters/apikeys/ApiKeysCached.ts"
import * as EmbeddedDatabase from "./adapters/embedded/EmbeddedDatabase.ts"
import * as AdminFile from "./adapters/http/admin/AdminFile.ts"
import * as AdminRoutes from "./adapters/http/admin/AdminRoutes.ts"
import * as HttpApp from "./adapters/http/server/HttpApp.ts"
import * as NodeServer from "./adapters/http/server/NodeServer.ts"
import { ROUTER_CONFIG } from "./adapters/http/server/RouteTable.ts"
import * as ApiKeyStoreMemory from "./adapters/memory/keys/ApiKeyStoreMemory.ts"
import * as StoreMemory from "./adapters/memory/StoreMemory.ts"
import * as JsonLogLines from "./adapters/observability/JsonLogLines.ts"
import * as StoreMetrics from "./adapters/observability/StoreMetrics.ts"
import * as Tracing from "./adapters/observability/Tracing.ts"
import * as ApiKeyStoreSql from "./adapters/postgres/keys/ApiKeyStoreSql.ts"
import * as OrderRepositorySql from "./adapters/postgres/OrderRepositorySql.ts"
import * as PetRepositorySql from "./adapters/postgres/PetRepositorySql.ts"
import { AppConfig } from "./AppConfig.ts"
import { InvalidInput } from "./domain/Errors.ts"

// The database a SQL store runs on: PGlite in DATA_DIR, or a PostgreSQL server.
const database = (config: AppConfig) =>
  config.store === "embedded"
    ? EmbeddedDatabase.layer({ dataDir: config.dataDir })
    : Layer.unwrap(Effect.map(
      Effect.fromOption(config.databaseUrl).pipe(Effect.mapError(() => new Error("STORE=postgres needs DATABASE_URL"))),
      (url) =>
        PgClient.layer({
          url,
          maxConnections: config.databasePoolSize,
          connectTimeout: config.databaseConnectTimeout,
          // The server gives up on a statement at the same bound the adapter waits for it.
          startupParameters: {
            statement_timeout: String(Duration.toMillis(config.databaseStatementTimeout))
          }
        })
    ))

// Pets, orders and API keys over one store: an order and its pet change together, and
// the keys live in the same database.
const store = (config: AppConfig) => {
  if (config.store === "memory") return Layer.mergeAll(StoreMemory.layer, ApiKeyStoreMemory.layer)
  const options = { timeout: config.databaseStatementTimeout }
  return Layer.mergeAll(
    PetRepositorySql.layer(options),
    OrderRepositorySql.layer(options),
    // Other instances' key changes arrive through LISTEN; PGlite has one process, which makes them all.
    ApiKeyStoreSql.layer({ ...options, listen: config.store === "postgres" })
  ).pipe(Layer.provide(database(config)))
}

// Managed keys plus API_KEYS. With no key at all, a run still has to be usable: the
// memory store makes one up per run and says it once; a durable store issues one the
// first time and keeps it (only its digest), so the key stays valid across restarts.
const apiKeys = (config: AppConfig) =>
  Layer.unwrap(Effect.gen(function*() {
    if (config.apiKeys.length > 0) return ApiKeysCached.layer(config.apiKeys)
    if (config.store === "memory") {
      const key = randomBytes(24).toString("base64url")
      yield* Console.log(`No API_KEYS set. This run accepts one generated key: ${key}`)
      return ApiKeysCached.layer([Redacted.make(key)])
    }
    const issued = yield* ApiKeyAdminLocal.bootstrap
    if (Option.isSome(issued)) {
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
  config.store !== "embedded" ? Layer.empty : Layer.unwrap(Effect.sync(() => {
    const token = Redacted.make(randomBytes(32).toString("base64url"))
    return Layer.mergeAll(
      AdminRoutes.layer(token),
      AdminFile.layer(config.dataDir, token)
    ).pipe(
      Layer.provide(ApiKeyAdminLocal.layer),
      Layer.provide(NodeHttpServer.layer(createServer, { port: config.adminPort, host: "127.0.0.1" }))
    )
  }))

// What the HTTP app needs, measured, over one store.
const services = (config: AppConfig) =>
  Layer.mergeAll(StoreMetrics.petRepository, StoreMetrics.orderRepository, apiKeys(config), adminServer(config)).pipe(
    Layer.provide(store(config))
  )

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

const main = Effect.gen(function*() {
  const config = yield* AppConfig
  yield* Console.log(
    `Animal Store starting: ${config.store} store${config.store === "embedded" ? ` in ${config.dataDir}` : ""}, ` +
      `API at http://${config.host}:${config.port}/v1, docs at /docs`
  )
  // HttpApp writes each request's log line itself, with its id and route.
  const app = HttpApp.layer(
    { production: config.publicBaseUrl, staging: config.stagingBaseUrl },
    { metrics: config.metrics === "on" }
  )
  const server = HttpRouter.serve(app, { disableLogger: true, routerConfig: ROUTER_CONFIG })
    .pipe(
      Layer.provide(services(config)),
      Layer.provide(Tracing.layer),
      Layer.provide(NodeServer.layer({ port: config.port, host: config.host, shutdownTimeout: Duration.seconds(10) }))
    )
  return yield* Layer.launch(server).pipe(
    Effect.provideService(References.MinimumLogLevel, LOG_LEVELS[config.logLevel])
  )
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
  Effect.provide(JsonLogLines.layer)
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  // SIGTERM/SIGINT interrupt the server, which stops accepting and drains: a clean exit.
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
})
