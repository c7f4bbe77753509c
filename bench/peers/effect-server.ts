/**
 * The Effect floor for the side-by-side HTTP benchmark: Animal Store's three animal
 * operations (list with keyset paging and a Link header, create, get by id with the
 * deprecation headers) and its bearer check on a Map, on PostgreSQL through node-postgres
 * (pg-store.ts) or on PostgreSQL through @effect/sql-pg (sqlpg-store.ts, the driver of
 * Animal Store's SQL adapters), served by Effect 4's own HTTP stack the way Animal Store
 * serves its hot routes: plain `HttpRouter` routes, `HttpRouter.serve` and `NodeHttpServer`
 * on a node:http server, launched by `NodeRuntime.runMain`. The store's operations are
 * Effects (effect-store.ts): sql-pg's statements run in the request's fiber; the Map and
 * node-postgres stores' Promises are wrapped, one `tryPromise` per call.
 *
 * Nothing of Animal Store's features: no request log (`disableLogger`), no request id, no
 * metrics, no span of its own, no schema; the request rules are the bare reference
 * server's, from wire-rules.ts. What it costs over the reference on the Map is Effect's
 * platform (runtime, router, request and response objects); what the sql-pg store costs
 * over the node-postgres one is the driver's share; what Animal Store costs over it on the
 * same storage is Animal Store's features (and, on PostgreSQL, its SQL adapter).
 *
 * Spans: HttpEffect opens a server span per request only when a tracer other than the
 * native one is installed (or a serve middleware is given); none is here, so the router
 * runs without one, as in Animal Store when no OTLP exporter is configured.
 *
 * Usage: node bench/peers/effect-server.ts '{"port":1234,"apiKeys":["k"],"store":"map"}'
 *        (stores "pg" and "sqlpg" need "databaseUrl"). Listens on 127.0.0.1 only.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { ByteSize, Cause, Effect, Exit, Layer } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import { type EffectPetStore, openEffectStore } from "./effect-store.ts"
import { peerArgs } from "./peer-args.ts"
import {
  bearerCheck,
  DEPRECATION_HEADERS,
  errorBody,
  internalError,
  invalidRequest,
  isJsonContentType,
  isWireError,
  keysetPage,
  MAX_BODY_BYTES,
  noRoute,
  parseBody,
  parseListQuery,
  parsePetId,
  payloadTooLarge,
  petNotFound,
  toJson,
  unauthorized,
  unsupportedMediaType,
  validateNewPet,
  type WireError
} from "./wire-rules.ts"

const args = peerArgs()

const MAX_BODY_SIZE = ByteSize.bytes(MAX_BODY_BYTES)

const send = (status: number, body: unknown, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.text(JSON.stringify(body), { status, contentType: "application/json", headers })

const fail = (error: WireError, headers?: Readonly<Record<string, string>>) =>
  send(error.status, errorBody(error), error.headers === undefined ? headers : { ...error.headers, ...headers })

/** A store call; a store failure is the 500 Error body, as the Fastify peer answers it. */
const fromStore = <A>(
  call: Effect.Effect<A, unknown>,
  respond: (value: A) => HttpServerResponse.HttpServerResponse,
  headers?: Readonly<Record<string, string>>
) =>
  call.pipe(
    Effect.map(respond),
    Effect.catch(() => Effect.succeed(fail(internalError, headers)))
  )

const authorized = bearerCheck(args.apiKeys)

/** What the router provides a route's handler. */
type RouteServices = HttpServerRequest.HttpServerRequest | HttpServerRequest.ParsedSearchParams | HttpRouter.RouteContext

const bearerAuth = <R extends RouteServices>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const auth = authorized(request.headers["authorization"])
    return auth === "ok" ? handler : Effect.succeed(fail(unauthorized(auth)))
  })

const first = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

const routes = (store: EffectPetStore) =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const list = Effect.flatMap(HttpServerRequest.ParsedSearchParams, (params) => {
      const query = parseListQuery(first(params["limit"]), first(params["status"]), first(params["cursor"]))
      if (isWireError(query)) return Effect.succeed(fail(query))
      return fromStore(
        store.list({ limit: query.limit + 1, status: query.status, after: query.after }),
        (rows) => {
          const { page, link } = keysetPage(rows, query)
          return send(200, page.map(toJson), link === undefined ? {} : { link })
        }
      )
    })

    const get = Effect.flatMap(HttpRouter.RouteContext, ({ params }) => {
      const id = parsePetId(params["petId"])
      if (typeof id !== "bigint") return Effect.succeed(fail(id, DEPRECATION_HEADERS))
      return fromStore(
        store.get(id),
        (pet) =>
          pet === undefined ? fail(petNotFound(id), DEPRECATION_HEADERS) : send(200, toJson(pet), DEPRECATION_HEADERS),
        DEPRECATION_HEADERS
      )
    })

    const create = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const contentType = request.headers["content-type"]
      if (!isJsonContentType(contentType)) return Effect.succeed(fail(unsupportedMediaType(contentType)))
      // A declared length over the limit is refused before a byte of the body is read.
      if (Number(request.headers["content-length"] ?? "0") > MAX_BODY_BYTES) return Effect.succeed(fail(payloadTooLarge))
      return request.text.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, MAX_BODY_SIZE),
        Effect.flatMap((text) => {
          const parsed = parseBody(text)
          if (isWireError(parsed)) return Effect.succeed(fail(parsed))
          const pet = validateNewPet(parsed.value)
          if (typeof pet === "string") return Effect.succeed(fail(invalidRequest(pet)))
          return fromStore(
            store.create(pet),
            (stored) => send(201, toJson(stored), { location: `/v1/pets/${stored.id}` })
          )
        }),
        // The body could not be read: over the limit while streaming, or cut off.
        Effect.catch((error) =>
          Effect.succeed(
            error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
              ? fail(payloadTooLarge)
              : fail(invalidRequest("body: could not be read"))
          )
        )
      )
    })

    const notFound = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
      const index = request.url.indexOf("?")
      return fail(noRoute(request.method, index === -1 ? request.url : request.url.slice(0, index)))
    })

    yield* router.add("GET", "/healthz", send(200, { status: "ok" }))
    yield* router.add("GET", "/v1/pets", bearerAuth(list))
    yield* router.add("POST", "/v1/pets", bearerAuth(create))
    yield* router.add("GET", "/v1/pets/:petId", bearerAuth(get))
    // Anything else: the JSON 404 instead of the router's empty one.
    yield* router.add("*", "/*", notFound)
  }))

const store = Layer.unwrap(Effect.map(openEffectStore(args), routes))

const server = HttpRouter.serve(store, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide(NodeHttpServer.layer(() => createServer(), {
    port: args.port,
    host: "127.0.0.1",
    gracefulShutdownTimeout: "2 seconds"
  }))
)

NodeRuntime.runMain(Layer.launch(server), {
  // SIGTERM/SIGINT interrupt the server, which stops accepting and drains: a clean exit.
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
})
