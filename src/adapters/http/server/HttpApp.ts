import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiScalar, OpenApi } from "effect/http-api"
import { PetRepository } from "../../../ports/PetRepository.ts"
import { Api } from "../api/Api.ts"
import * as AnimalsHandlers from "./AnimalsHandlers.ts"
import * as AuthorizationLive from "./AuthorizationLive.ts"
import * as ErrorResponses from "./ErrorResponses.ts"
import * as JsonContentTypeLive from "./JsonContentTypeLive.ts"
import * as RequestValidationLive from "./RequestValidationLive.ts"
import * as RouteTable from "./RouteTable.ts"
import { toHttpError } from "./HttpErrors.ts"
import * as SunsetHeaders from "./SunsetHeaders.ts"

/** Public base addresses, each including `/v1`, listed as `servers` in the OpenAPI document. */
export interface Servers {
  readonly production: string
  readonly staging: string
}

const OPENAPI_PATH = "/v1/openapi.json"
const DOCS_PATH = "/docs"

const health = HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))

// Readiness asks the store, so a load balancer stops routing here while the database is away.
const readiness = HttpRouter.use(Effect.fn(function*(router) {
  const pets = yield* PetRepository
  yield* router.add(
    "GET",
    "/readyz",
    pets.ready.pipe(
      Effect.as(HttpServerResponse.jsonUnsafe({ status: "ready" })),
      Effect.catchTag("StoreUnavailable", (error) => Effect.succeed(ErrorResponses.errorResponse(toHttpError(error))))
    )
  )
}))

/**
 * Every route of the service: the /v1 API, its OpenAPI document and docs, health and
 * readiness, with the JSON error and deprecation policies around them.
 */
export const layer = (servers: Servers) => {
  // The contract carries no deployment addresses; this instance documents its own.
  const api = Api.annotate(OpenApi.Servers, [
    { url: servers.production, description: "production" },
    { url: servers.staging, description: "staging" }
  ])
  const routes = RouteTable.make(api, [["GET", OPENAPI_PATH], ["GET", DOCS_PATH], ["GET", "/healthz"], ["GET", "/readyz"]])
  return Layer.mergeAll(
    HttpApiBuilder.layer(api, { openapiPath: OPENAPI_PATH }).pipe(
      Layer.provide(AnimalsHandlers.layer.pipe(
        Layer.provide([AuthorizationLive.layer, RequestValidationLive.layer, JsonContentTypeLive.layer])
      ))
    ),
    HttpApiScalar.layer(api, { path: DOCS_PATH }),
    health,
    readiness,
    ErrorResponses.layer(routes),
    SunsetHeaders.layer(routes)
  )
}
