/**
 * The store wiring of every program: turns a StoreConfig into the layers of the ports over
 * one store, for the service (ServiceProgram: every port), the keys command (KeysProgram: key
 * administration), the webhooks command (WebhooksProgram: webhook administration) and the
 * migrate command (MigrateProgram: the database alone). Only the programs import it.
 *
 * Each store's modules are loaded only when it is picked: the memory store never loads
 * the PostgreSQL driver, and neither loads PGlite. Pets, orders, API keys and the answers
 * of idempotent creates share the store: an order and its pet change together, and a
 * create and its kept answer are written in one transaction.
 */
import { Deferred, Duration, Effect, Layer, Option } from "effect"
import * as Path from "node:path"
import * as ApiKeyAdminLocal from "../application/keys/ApiKeyAdminLocal.ts"
import * as WebhookAdminLocal from "../application/webhooks/WebhookAdminLocal.ts"
import * as AdminFile from "../adapters/http/admin/AdminFile.ts"
import type * as EmbeddedOpening from "../adapters/embedded/EmbeddedOpening.ts"
import * as ReleaseDeadline from "../adapters/process/ReleaseDeadline.ts"
import type { WebhookSender } from "../ports/webhooks/WebhookSender.ts"
import type { StoreConfig } from "./StoreConfig.ts"

/** How the service and the keys command differ in what they ask of the store. */
export interface Options {
  /** PostgreSQL: connections in the pool; DATABASE_POOL_SIZE when omitted. */
  readonly poolSize?: number | undefined
  /**
   * PostgreSQL: hear other instances' key changes and events through LISTEN, on one
   * connection of its own (PgNotifications). A service keeps a key cache and follows the
   * event feed; on PGlite this process makes every change itself.
   */
  readonly listen: boolean
  /** Embedded: the opening begun at start-up, adopted when it is of the configured directory. */
  readonly opening?: EmbeddedOpening.Opening | undefined
  /** Embedded: open only a directory that holds a database already (see EmbeddedDatabase.Options). */
  readonly existingOnly?: boolean | undefined
  /**
   * PostgreSQL: the database can be replaced under the instance; watched, this fails
   * once its schema is seen gone.
   */
  readonly schemaLost?: Deferred.Deferred<never, Error> | undefined
}

// What each bounded release (ReleaseDeadline) is called in the log when it does not finish.
const EMBEDDED_DATABASE = "the embedded database (PGlite and its thread)"

// How often a PostgreSQL instance checks that its database still records its migrations:
// a lost schema stops it after two checks in a row (Migrations.watch), within 4 s.
const SCHEMA_CHECK_EVERY = Duration.seconds(2)

/** Whether the store `config` picks adopts `opening` (the embedded store, in the same directory). */
export const adopts = (config: StoreConfig, opening: EmbeddedOpening.Opening | undefined): boolean =>
  config.store === "embedded" && opening?.dataDir === Path.resolve(config.dataDir)

/**
 * Releases `opening`, adopted by the store or not, within ReleaseDeadline's bound (a
 * no-op after the store has released it).
 */
export const releaseOpening = (opening: EmbeddedOpening.Opening | undefined): Effect.Effect<void> =>
  Effect.tryPromise(() => opening?.release() ?? Promise.resolve()).pipe(
    Effect.ignore({ log: "Warn", message: "Closing the embedded database opened at start-up failed" }),
    ReleaseDeadline.bound(EMBEDDED_DATABASE)
  )

// The one choice of adapters: the memory store's, or the SQL adapters over PGlite or a
// PostgreSQL server: every port (the service), or the key store alone (the keys command).
// A program builds one of the two, so its database is opened once.
const layers = (config: StoreConfig, options: Options) => Effect.promise(async () => {
  if (config.store === "memory") {
    const [StoreMemory, ApiKeyStoreMemory] = await Promise.all([
      import("../adapters/memory/StoreMemory.ts"),
      import("../adapters/memory/keys/ApiKeyStoreMemory.ts")
    ])
    return { all: Layer.merge(StoreMemory.layer, ApiKeyStoreMemory.layer), keys: ApiKeyStoreMemory.layer, webhooks: undefined }
  }
  const [
    PetRepositorySql,
    OrderRepositorySql,
    EventLogSql,
    IdempotentCreatesSql,
    ApiKeyStoreSql,
    WebhookRepositorySql,
    PhotoRepositorySql,
    PhotoStoreSql
  ] = await Promise.all([
    import("../adapters/postgres/pets/PetRepositorySql.ts"),
    import("../adapters/postgres/orders/OrderRepositorySql.ts"),
    import("../adapters/postgres/events/EventLogSql.ts"),
    import("../adapters/postgres/idempotency/IdempotentCreatesSql.ts"),
    import("../adapters/postgres/keys/ApiKeyStoreSql.ts"),
    import("../adapters/postgres/webhooks/WebhookRepositorySql.ts"),
    import("../adapters/postgres/photos/PhotoRepositorySql.ts"),
    import("../adapters/postgres/photos/PhotoStoreSql.ts")
  ])
  const timeout = { timeout: config.databaseStatementTimeout }
  const database = await sqlDatabase(config, options)
  const keys = ApiKeyStoreSql.layer({ ...timeout, listen: options.listen && config.store === "postgres" })
  const all = Layer.mergeAll(
    // PGlite's one connection carries every call's statements (see PetRepositorySql.Options).
    PetRepositorySql.layer({ ...timeout, sharedConnection: config.store === "embedded" }),
    OrderRepositorySql.layer(timeout),
    EventLogSql.layer({ ...timeout, listen: options.listen && config.store === "postgres" }),
    IdempotentCreatesSql.layer(timeout),
    keys,
    WebhookRepositorySql.layer(timeout),
    // Photos' records, and their bytes in the same database (photo_blobs): the default PhotoStore.
    PhotoRepositorySql.layer(timeout),
    PhotoStoreSql.layer(timeout)
  )
  return {
    all: Layer.provide(all, database),
    keys: Layer.provide(keys, database),
    // The log too: a new subscription starts at its end.
    webhooks: Layer.provide(Layer.merge(WebhookRepositorySql.layer(timeout), EventLogSql.layer(timeout)), database)
  }
})

// PGlite in the data directory, or the PostgreSQL server's connection pool.
// With MIGRATE=off, with it what the migrations do at start (Migrations.AtStart): check only.
const sqlDatabase = async (config: StoreConfig, options: Options) => {
  const database = config.store === "embedded" ? await embedded(config, options) : postgres(config, options)
  if (config.migrate === "on") return database
  const Migrations = await import("../adapters/postgres/Migrations.ts")
  // Provided to the database too: PostgreSQL's schema watch builds the migrations first.
  return Layer.provideMerge(
    database,
    Layer.succeed(Migrations.AtStart)({ _tag: "Check", why: "MIGRATE=off (run `npm run migrate -- apply` first)" })
  )
}

const embedded = async (config: StoreConfig, options: Options) => {
  const EmbeddedDatabase = await import("../adapters/embedded/EmbeddedDatabase.ts")
  const opening = adopts(config, options.opening) ? options.opening : undefined
  return ReleaseDeadline.layer(EMBEDDED_DATABASE)(EmbeddedDatabase.layer({
    dataDir: config.dataDir,
    opening,
    existingOnly: options.existingOnly
  }))
}

const postgres = (config: StoreConfig, options: Options) =>
  Layer.unwrap(Effect.gen(function*() {
    const url = yield* Effect.fromOption(config.databaseUrl).pipe(
      Effect.mapError(() => new Error("STORE=postgres needs DATABASE_URL"))
    )
    const [PostgresClient, Migrations] = yield* Effect.promise(() =>
      Promise.all([import("../adapters/postgres/PostgresClient.ts"), import("../adapters/postgres/Migrations.ts")])
    )
    const client = ReleaseDeadline.layer("the PostgreSQL connection pool")(PostgresClient.layer({
      url,
      poolSize: options.poolSize ?? config.databasePoolSize,
      connectTimeout: config.databaseConnectTimeout,
      statementTimeout: config.databaseStatementTimeout
    }))
    const { schemaLost } = options
    if (schemaLost === undefined) return client
    // The instance stops rather than migrate under whoever replaced the database (a restore
    // may still be running): its supervisor restarts it, and the start migrates.
    const schemaWatch = Layer.effectDiscard(Effect.forkScoped(
      Migrations.watch({ every: SCHEMA_CHECK_EVERY, timeout: config.databaseStatementTimeout }).pipe(
        Effect.catch((lost) =>
          Deferred.fail(schemaLost, new Error(`${lost.message}; stopping, so that a restart migrates it`))),
        // A periodic look that nearly always finds nothing: no trace.
        Effect.withTracerEnabled(false)
      )
    )).pipe(Layer.provide(Migrations.layer))
    return Layer.provideMerge(schemaWatch, client)
  }))

/**
 * Every port of the store: pets, orders, their events, idempotent creates and API keys
 * (the service); with PHOTO_STORE=s3, photos' bytes in the bucket instead of the store.
 */
export const ports = (config: StoreConfig, options: Options) =>
  Layer.unwrap(Effect.map(layers(config, options), ({ all }) =>
    // The later layer's PhotoStore is the one provided.
    config.photoStore === "s3" ? Layer.merge(all, photoStoreS3(config)) : all))

// Loaded only when picked: the AWS SDK is an optional peer.
const photoStoreS3 = (config: StoreConfig) =>
  Layer.unwrap(Effect.gen(function*() {
    const bucket = yield* Effect.fromOption(config.s3Bucket).pipe(
      Effect.mapError(() => new Error("PHOTO_STORE=s3 needs S3_BUCKET"))
    )
    const PhotoStoreS3 = yield* Effect.promise(() => import("../adapters/s3/PhotoStoreS3.ts"))
    return PhotoStoreS3.layer({
      endpoint: config.s3Endpoint,
      bucket,
      region: config.s3Region,
      timeout: config.s3Timeout
    })
  }))

/**
 * Key administration (the keys command). The embedded store is one process's: while a
 * service has the directory open, through its admin port, which changes its cache at
 * once; otherwise on the store itself. The memory store's keys live and die with its
 * service, so there is nothing to manage.
 */
export const keyAdmin = (config: StoreConfig, options: Options) =>
  Layer.unwrap(Effect.gen(function*() {
    if (config.store === "memory") {
      return yield* Effect.fail(new Error("STORE=memory keeps its keys inside the service process; there is nothing to manage"))
    }
    const running = config.store === "embedded" ? yield* AdminFile.read(config.dataDir) : Option.none()
    if (Option.isSome(running)) {
      const ApiKeyAdminHttp = yield* Effect.promise(() => import("../adapters/http/admin/ApiKeyAdminHttp.ts"))
      return ApiKeyAdminHttp.layer(running.value)
    }
    const { keys } = yield* layers(config, options)
    return Layer.provide(ApiKeyAdminLocal.layer, keys)
  }))

/**
 * Webhook administration (the webhooks command), as key administration: on the embedded
 * store while a service has the directory open, through its admin port (the service
 * judges the URL by its own rules and delivers from its next event); otherwise on the
 * store itself, judging URLs with `urlRules`. The memory store's subscriptions live and
 * die with its service, so there is nothing to manage.
 */
export const webhookAdmin = <E>(config: StoreConfig, options: Options, urlRules: Layer.Layer<WebhookSender, E>) =>
  Layer.unwrap(Effect.gen(function*() {
    if (config.store === "memory") {
      return yield* Effect.fail(new Error("STORE=memory keeps its webhooks inside the service process; there is nothing to manage"))
    }
    const running = config.store === "embedded" ? yield* AdminFile.read(config.dataDir) : Option.none()
    if (Option.isSome(running)) {
      const WebhookAdminHttp = yield* Effect.promise(() => import("../adapters/http/admin/WebhookAdminHttp.ts"))
      return WebhookAdminHttp.layer(running.value)
    }
    const { webhooks } = yield* layers(config, options)
    if (webhooks === undefined) return yield* Effect.die(new Error("only the memory store has no webhooks layer"))
    return Layer.provide(WebhookAdminLocal.layer, Layer.merge(webhooks, urlRules))
  }))

/**
 * The store's SQL database alone, for the migrate command: PGlite in the data directory
 * (held, as by a service, while the command runs) or the PostgreSQL server.
 */
export const database = (config: StoreConfig, options: Options) =>
  Layer.unwrap(Effect.gen(function*() {
    if (config.store === "memory") {
      return yield* Effect.fail(new Error("STORE=memory has no schema: there is nothing to migrate"))
    }
    return yield* Effect.promise(() => sqlDatabase(config, options))
  }))
