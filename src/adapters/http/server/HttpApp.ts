import { Effect, Layer, Option, type Scope } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { OpenApi } from "effect/http-api"
import { StoreUnavailable } from "../../../domain/Errors.ts"
import { PetRepository } from "../../../ports/pets/PetRepository.ts"
import { RateLimits } from "../../../ports/ratelimits/RateLimits.ts"
import { Api } from "../api/Api.ts"
import * as ApiRouter from "./routing/ApiRouter.ts"
import * as Cors from "./policies/Cors.ts"
import * as DocsPage from "./process/DocsPage.ts"
import * as EventFanout from "./events/EventFanout.ts"
import * as EventHandlers from "./events/EventHandlers.ts"
import * as ErrorResponses from "./policies/ErrorResponses.ts"
import * as MetricsRoute from "./process/MetricsRoute.ts"
import * as OrderHandlers from "./orders/OrderHandlers.ts"
import * as PetHandlers from "./pets/PetHandlers.ts"
import * as PhotoHandlers from "./photos/PhotoHandlers.ts"
import { DEFAULTS as PHOTO_URL_DEFAULTS, type Options as PhotoUrlOptions, PhotoUrls } from "./photos/PhotoUrls.ts"
import * as WebhookHandlers from "./webhooks/WebhookHandlers.ts"
import { WebhookSenderHttp } from "../../webhooks/index.ts"
import * as RequestTelemetry from "./policies/RequestTelemetry.ts"
import * as RouteTable from "./routing/RouteTable.ts"
import * as StaticAsset from "./process/StaticAsset.ts"
import { toHttpError } from "./policies/HttpErrors.ts"

export { ROUTER_CONFIG } from "./routing/RouteTable.ts"

/**
 * Public base addresses, each including `/v1`, listed as `servers` in the OpenAPI document
 * after the address the document was served from.
 */
export interface Servers {
  readonly production?: string | undefined
  readonly staging?: string | undefined
}

/**
 * The first server, which docs pages and generators pick by default: relative, so that
 * "Test Request" on /docs calls the very instance (and port) that served the page.
 */
const THIS_SERVER = { url: "/v1", description: "this server (the address the document was served from)" }

const OPENAPI_PATH = "/v1/openapi.json"
const DOCS_PATH = "/docs"

const health = HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))

// Readiness asks the store, so a load balancer stops routing here while the database is
// away, and says which check failed and why. A rate-limit store that does not answer is
// named but keeps the instance ready: requests are then served unlimited (fail open).
const readiness = HttpRouter.use(Effect.fn(function*(router) {
  const pets = yield* PetRepository
  const limits = yield* Effect.serviceOption(RateLimits)
  const rateLimitsCheck = Option.match(limits, {
    onNone: () => Effect.succeed({}),
    onSome: (limits) =>
      Effect.map(limits.health, (health) => ({
        rateLimits: health._tag === "Ok" ? "ok" : `degraded: ${health.reason}`
      }))
  })
  yield* router.add(
    "GET",
    "/readyz",
    pets.ready.pipe(
      Effect.andThen(rateLimitsCheck),
      Effect.map((checks) => HttpServerResponse.jsonUnsafe({ status: "ready", checks: { store: "ok", ...checks } })),
      Effect.catchTag("StoreUnavailable", (error) =>
        Effect.succeed(ErrorResponses.errorResponse(toHttpError(
          new StoreUnavailable({ message: `not ready: store: ${error.message}` })
        ))))
    )
  )
}))

// The OpenAPI document of the whole Api, made on first request as HttpApiBuilder would,
// compressed and cached as a static asset.
const openApiRoute = (api: typeof Api) =>
  HttpRouter.add("GET", OPENAPI_PATH, Effect.sync(() => HttpServerResponse.jsonUnsafe(OpenApi.fromApi(api))))

// One handler per operation of the Api; leaving one out fails the typecheck. The Scope is
// the request's, in which an event stream holds its place.
const handlers = Effect.map(
  Effect.all([PetHandlers.make, OrderHandlers.make, EventHandlers.make, WebhookHandlers.make, PhotoHandlers.make]),
  ([pets, orders, events, webhooks, photos]): ApiRouter.Handlers<Scope.Scope> => ({
    ...pets,
    ...orders,
    ...events,
    ...webhooks,
    ...photos
  })
)

/** What to serve besides the API. */
export interface Options {
  /** Serve `GET /metrics` (Prometheus text format, no key) and record requests in it. Default: true. */
  readonly metrics?: boolean | undefined
  /** Origins allowed to call the API from a browser (CORS). Default: none, CORS off. */
  readonly cors?: Cors.CorsOrigins | undefined
  /**
   * Webhook URLs may point at private addresses and use plain http (WEBHOOK_ALLOW_PRIVATE;
   * development and tests only). Default: false.
   */
  readonly webhookAllowPrivate?: boolean | undefined
  /** The SSE feed's poll, heartbeat and most streams. Default: {@link EventFanout.DEFAULTS}. */
  readonly events?: EventFanout.Options | undefined
  /** Photos: the largest upload body and how their URLs are signed. Default: {@link PHOTO_DEFAULTS}. */
  readonly photos?: PhotoOptions | undefined
}

/** What the photo operations take and sign. */
export interface PhotoOptions {
  /** The largest upload body in bytes (PHOTO_MAX_BYTES), a form's boundaries and part headers included. */
  readonly maxBytes: number
  readonly urls: PhotoUrlOptions
}

/** 10 MiB uploads, URLs valid for an hour, signed with the store's own secret. */
export const PHOTO_DEFAULTS: PhotoOptions = { maxBytes: 10 * 1024 * 1024, urls: PHOTO_URL_DEFAULTS }

/**
 * Every route of the service: the /v1 API, its OpenAPI document and docs, health,
 * readiness and metrics, with request ids, telemetry, and the JSON error and deprecation
 * policies around them. Each request writes one log line: serve it with
 * `HttpRouter.serve(..., { disableLogger: true })` to have only that one.
 */
export const layer = (servers: Servers, options?: Options) => {
  const metrics = options?.metrics ?? true
  const photos = options?.photos ?? PHOTO_DEFAULTS
  // The contract carries no deployment addresses; this instance documents its own.
  const api = Api.annotate(OpenApi.Servers, [
    THIS_SERVER,
    ...(servers.production === undefined ? [] : [{ url: servers.production, description: "production" }]),
    ...(servers.staging === undefined ? [] : [{ url: servers.staging, description: "staging" }])
  ])
  const routes = RouteTable.make(api, [
    ["GET", OPENAPI_PATH],
    ["GET", DOCS_PATH],
    ["GET", "/healthz"],
    ["GET", "/readyz"],
    ...(metrics ? [["GET", MetricsRoute.METRICS_PATH] as const] : [])
  ])
  return Layer.mergeAll(
    ApiRouter.layer(handlers, { rawBodyMaxBytes: photos.maxBytes }).pipe(
      Layer.provide(WebhookSenderHttp.layer({ allowPrivate: options?.webhookAllowPrivate ?? false })),
      Layer.provide(PhotoUrls.layer(photos.urls)),
      Layer.provide(EventFanout.layer(options?.events ?? EventFanout.DEFAULTS))
    ),
    Layer.mergeAll(openApiRoute(api), DocsPage.layer(api, DOCS_PATH)).pipe(
      Layer.provide(StaticAsset.middleware.layer)
    ),
    health,
    readiness,
    metrics ? MetricsRoute.layer : Layer.empty,
    // The one global middleware: telemetry, the JSON error policy, the deprecation, CORS and common headers.
    RequestTelemetry.layer(routes, { cors: options?.cors, metrics })
  )
}
