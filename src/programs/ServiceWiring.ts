/**
 * The service's own layers over the store's ports (StoreWiring), from its settings: the
 * key check with its bootstrap, the embedded store's admin port, both repositories
 * measured, and the rate limits with their buckets in this process or in Redis. Only
 * ServiceProgram imports it.
 */
import { Console, Duration, Effect, Layer, Option, Redacted, References } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import * as EventRetention from "../application/events/EventRetention.ts"
import * as PhotoSweep from "../application/photos/PhotoSweep.ts"
import * as ApiKeyAdminLocal from "../application/keys/ApiKeyAdminLocal.ts"
import * as WebhookAdminLocal from "../application/webhooks/WebhookAdminLocal.ts"
import * as WebhookDispatcher from "../application/webhooks/WebhookDispatcher.ts"
import * as ApiKeysCached from "../adapters/apikeys/ApiKeysCached.ts"
import * as StoreMetrics from "../adapters/observability/StoreMetrics.ts"
import * as RateLimiterStoreMemory from "../adapters/ratelimits/RateLimiterStoreMemory.ts"
import * as RateLimitsTokenBucket from "../adapters/ratelimits/RateLimitsTokenBucket.ts"
import * as ReleaseDeadline from "../adapters/process/ReleaseDeadline.ts"
import { WebhookSenderHttp } from "../adapters/webhooks/index.ts"
import { EventLog } from "../ports/events/EventLog.ts"
import { IdempotentCreates } from "../ports/idempotency/IdempotentCreates.ts"
import { OrderRepository } from "../ports/orders/OrderRepository.ts"
import { PetRepository } from "../ports/pets/PetRepository.ts"
import { PhotoRepository } from "../ports/photos/PhotoRepository.ts"
import { PhotoStore } from "../ports/photos/PhotoStore.ts"
import { WebhookRepository } from "../ports/webhooks/WebhookRepository.ts"
import type { ServiceConfig } from "./ServiceConfig.ts"
import type { StoreConfig } from "./StoreConfig.ts"

// Managed keys plus API_KEYS. With no key at all, a run still has to be usable: the
// memory store makes one up per run and says it once; a durable store issues one the
// first time and keeps it (only its digest), so the key stays valid across restarts.
// The embedded store writes that key to a file in DATA_DIR (owner only) and says where:
// stderr too is often collected and shipped, and a key kept for good must not travel.
const apiKeys = (store: StoreConfig, service: ServiceConfig) =>
  Layer.unwrap(Effect.gen(function*() {
    if (service.apiKeys.length > 0) return ApiKeysCached.layer(service.apiKeys)
    if (store.store === "memory") {
      const key = randomBytes(24).toString("base64url")
      // On stderr, for the operator: the stdout log stream is collected and shipped, and never holds a key.
      yield* Console.error(`No API_KEYS set. This run accepts one generated key: ${key}`)
      return ApiKeysCached.layer([Redacted.make(key)])
    }
    const issued = yield* ApiKeyAdminLocal.bootstrap
    if (Option.isSome(issued) && store.store === "embedded") {
      const BootstrapKeyFile = yield* Effect.promise(() => import("../adapters/apikeys/BootstrapKeyFile.ts"))
      const file = yield* BootstrapKeyFile.write(store.dataDir, issued.value.key)
      yield* Console.error(
        `No API key existed, so this store issued one write key, written to ${file} (readable by its owner ` +
          `only; store the key elsewhere and delete the file; manage keys with animal-store keys)`
      )
    } else if (Option.isSome(issued)) {
      yield* Console.error(
        `No API key existed, so this store issued one write key, shown only now: ${
          Redacted.value(issued.value.key)
        } (manage keys with animal-store keys)`
      )
    }
    return ApiKeysCached.layer([])
  }))

// The embedded store is one process per data directory, so key and webhook management
// while the service runs goes through it: admin routes on a loopback-only port, found
// through a file in DATA_DIR that holds a fresh token. A URL is judged by the service's
// rules, as its deliveries will be.
const adminServer = (store: StoreConfig, service: ServiceConfig) =>
  store.store !== "embedded" ? Layer.empty : Layer.unwrap(Effect.promise(async () => {
    const [AdminRoutes, AdminFile, NodeHttpServer, Http] = await Promise.all([
      import("../adapters/http/admin/AdminRoutes.ts"),
      import("../adapters/http/admin/AdminFile.ts"),
      import("@effect/platform-node/NodeHttpServer"),
      import("node:http")
    ])
    const token = Redacted.make(randomBytes(32).toString("base64url"))
    return Layer.mergeAll(AdminRoutes.layer(token), AdminFile.layer(store.dataDir, token)).pipe(
      Layer.provide([
        ApiKeyAdminLocal.layer,
        WebhookAdminLocal.layer.pipe(Layer.provide(WebhookSenderHttp.layer({ allowPrivate: service.webhookAllowPrivate })))
      ]),
      Layer.provide(NodeHttpServer.layer(Http.createServer, { port: service.adminPort, host: "127.0.0.1" }))
    )
  }))

// Each instance delivers webhooks; its leases carry a name no other instance has.
const webhookDelivery = (service: ServiceConfig) =>
  WebhookDispatcher.layer({
    owner: `${hostname()}/${process.pid}/${randomBytes(6).toString("base64url")}`,
    lease: service.webhookLease
  }).pipe(Layer.provide(WebhookSenderHttp.layer({ allowPrivate: service.webhookAllowPrivate })))

// The photo processor is made only here: a host embedding the library without sharp still
// serves photos, and takes no upload (PhotoUploads). Without sharp installed, the service
// stops at start naming the package; sharp itself is loaded on the first upload.
const photoProcessing = (service: ServiceConfig) =>
  Layer.unwrap(Effect.promise(async () => {
    const { PhotoProcessorSharp } = await import("../adapters/images/index.ts")
    return PhotoProcessorSharp.layer({ ...PhotoProcessorSharp.DEFAULTS, maxPixels: service.photoMaxPixels })
  }))

/**
 * What the HTTP app needs of the store's ports: both repositories (measured unless
 * METRICS is off, when no one could read the series), idempotent creates, the event feed
 * with its retention sweep, the webhook subscriptions and their delivery, the key check,
 * and the embedded store's admin port.
 */
export const services = (store: StoreConfig, service: ServiceConfig) =>
  Layer.mergeAll(
    service.metrics === "on"
      ? Layer.mergeAll(StoreMetrics.petRepository, StoreMetrics.orderRepository)
      : Layer.mergeAll(
        Layer.effect(PetRepository, Effect.service(PetRepository)),
        Layer.effect(OrderRepository, Effect.service(OrderRepository))
      ),
    Layer.effect(IdempotentCreates, Effect.service(IdempotentCreates)),
    Layer.effect(WebhookRepository, Effect.service(WebhookRepository)),
    Layer.effect(EventLog, Effect.service(EventLog)),
    Layer.effect(PhotoRepository, Effect.service(PhotoRepository)),
    Layer.effect(PhotoStore, Effect.service(PhotoStore)),
    photoProcessing(service),
    EventRetention.layer({ retention: service.eventsRetention }),
    PhotoSweep.layer(),
    webhookDelivery(service),
    apiKeys(store, service),
    adminServer(store, service)
  )

// Buckets in this process, or in Redis so that every instance shares them. A Redis that
// stops answering costs a request at most REDIS_TIMEOUT before it goes on unlimited, and
// only until the adapter's circuit opens (RateLimitsTokenBucket.CIRCUIT_FAILURES in a row);
// node-redis's own reconnect warnings are muted, the adapter says it once per outage.
const REDIS_TIMEOUT = Duration.millis(250)
const rateLimiterStore = (service: ServiceConfig) =>
  Option.match(service.redisUrl, {
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

/** The per-key and per-address rate limits, or none when RATE_LIMIT is off. */
export const rateLimits = (service: ServiceConfig) =>
  Option.match(Option.zipWith(service.rateLimit, service.rateLimitAddress, (key, address) => ({ key, address })), {
    onNone: () => Layer.empty,
    onSome: ({ address, key }) =>
      RateLimitsTokenBucket.layer({
        policies: { key: { name: "key", ...key }, address: { name: "address", ...address } },
        timeout: Option.isSome(service.redisUrl) ? REDIS_TIMEOUT : undefined
      }).pipe(Layer.provide(rateLimiterStore(service)))
  })
