/**
 * The hot operations (listPets, getPet, createPet, listOrders, getOrder) as plain router routes.
 * HttpApiBuilder's per-endpoint machinery (middleware chain, generic decoding and
 * encoding of every slot, errors encoded through schemas) cost most of a request's CPU;
 * these handlers take the same steps in the same order (authorization, then the key's
 * scope, then input, then the store), decode with the endpoints' own schemas compiled once and write the same
 * bytes, so the Api stays the one source of the OpenAPI document and the typed client.
 */
import { Clock, Effect, Result, Schema, type SchemaIssue, SchemaParser } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiSecurity } from "effect/http-api"
import { Gone, InsufficientScope, InvalidInput, Unauthorized } from "../../../domain/Errors.ts"
import type { IdempotencyKey } from "../../../domain/idempotency/IdempotencyKey.ts"
import { createPetIdentity, IdempotentRequest } from "../../../domain/idempotency/IdempotentRequest.ts"
import { allows } from "../../../domain/keys/KeyScope.ts"
import { NewPet } from "../../../domain/NewPet.ts"
import type { OrderId } from "../../../domain/orders/OrderId.ts"
import type { OrderStatus } from "../../../domain/orders/OrderStatus.ts"
import type { Pet } from "../../../domain/Pet.ts"
import type { PetId } from "../../../domain/PetId.ts"
import type { PetStatus } from "../../../domain/PetStatus.ts"
import { PAGE_LIMIT_DEFAULT } from "../../../domain/PetQuery.ts"
import { IdempotentCreates } from "../../../ports/IdempotentCreates.ts"
import { OrderRepository } from "../../../ports/OrderRepository.ts"
import { PetRepository } from "../../../ports/PetRepository.ts"
import { fingerprintOf } from "../../idempotency/RequestFingerprint.ts"
import { Api } from "../api/Api.ts"
import { AUTH_REALM } from "../api/ApiErrors.ts"
import { CurrentCaller } from "../api/Authorization.ts"
import { isJsonContentType, unsupportedMediaType } from "../api/JsonContentType.ts"
import { CursorParam, OrderCursorParam } from "../api/PathAndQuery.ts"
import type { NewPetJson } from "../api/PetsApi.ts"
import { OrderJson } from "../api/StoreApi.ts"
import { SUNSET } from "../api/Sunset.ts"
import * as BearerCheck from "./BearerCheck.ts"
import { errorResponse } from "./ErrorResponses.ts"
import { toHttpError } from "./HttpErrors.ts"
import * as IdempotentResponses from "./IdempotentResponses.ts"
import { keysetPage } from "./KeysetPage.ts"

// Under the API's `/v1` prefix.
const { createPet, getPet, listPets } = Api.groups.animals.endpoints
const { getOrder, listOrders } = Api.groups.store.endpoints

// The decoders HttpApiBuilder derives from each endpoint, so issues and messages match.
// The groups' endpoint maps are untyped; the types are those of the schemas in PetsApi and StoreApi.
const decoder = <A>(schema: Schema.Top) =>
  SchemaParser.decodeUnknownResult(schema as unknown as Schema.Decoder<A>)
const decodeParams = decoder<{ readonly petId: PetId }>(getPet.params!)
const decodeQuery = decoder<{ readonly limit?: number; readonly status?: PetStatus; readonly cursor?: PetId }>(
  Schema.toCodecArrayFromSingle(listPets.query!)
)
const decodePayload = decoder<typeof NewPetJson.Type>(Schema.Union(createPet.payload.get("application/json")!.schemas))
const decodeCreateHeaders = decoder<{ readonly "idempotency-key"?: IdempotencyKey }>(createPet.headers!)
const decodeOrderParams = decoder<{ readonly orderId: OrderId }>(getOrder.params!)
const decodeOrderQuery = decoder<
  { readonly limit?: number; readonly status?: OrderStatus; readonly petId?: PetId; readonly cursor?: OrderId }
>(Schema.toCodecArrayFromSingle(listOrders.query!))
const decodeBearer = HttpApiBuilder.securityDecode(HttpApiSecurity.bearer)
const encodeCursor = Schema.encodeSync(CursorParam)
const encodeOrderCursor = Schema.encodeSync(OrderCursorParam)
// Orders are encoded by their wire schema: it writes the RFC 3339 times as OrderJson does.
const encodeOrder = Schema.encodeSync(OrderJson)

/** A 400 naming the field, as RequestValidation answers it (`whole` names the input itself). */
const invalid = (issue: SchemaIssue.Issue, whole: string) =>
  errorResponse(toHttpError(InvalidInput.fromIssue(issue, whole)))

/** A 401 with its challenge, as UnauthorizedResponse encodes it. */
const unauthorized = (error: Unauthorized) =>
  errorResponse(toHttpError(error), {
    "www-authenticate": error.credential === "invalid"
      ? `Bearer realm="${AUTH_REALM}", error="invalid_token"`
      : `Bearer realm="${AUTH_REALM}"`
  })

// A pet as PetJson writes it: the schema's key order, int64 fields with every digit. Written
// as text: a bigint's digits are already JSON, and 40 JSON.rawJSON objects per page cost more.
const petJson = (pet: Pet): string =>
  `{"id":${pet.id},"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId}${
    pet.status === undefined ? "" : `,"status":"${pet.status}"`
  }}`

const jsonText = (text: string, status: number, headers: Record<string, string>) =>
  HttpServerResponse.text(text, { status, contentType: "application/json", headers })

const json = (body: unknown, status: number, headers: Record<string, string>) =>
  jsonText(JSON.stringify(body), status, headers)

// HttpApi's own payload lookup then needs exactly this media type once normalized.
const isJsonMediaType = (contentType: string) => {
  const normalized = contentType.toLowerCase().trim()
  const index = normalized.indexOf(";")
  return (index === -1 ? normalized : normalized.slice(0, index).trim()) === "application/json"
}

/** What the router provides a route's handler. */
type RouteServices = HttpServerRequest.HttpServerRequest | HttpServerRequest.ParsedSearchParams | HttpRouter.RouteContext

/** Store failures as their Error responses. */
const orErrorResponse = <E extends Parameters<typeof toHttpError>[0], R>(
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => Effect.catch(effect, (error) => Effect.succeed(errorResponse(toHttpError(error))))

export const layer = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const pets = yield* PetRepository
  const orders = yield* OrderRepository
  const idempotent = yield* IdempotentCreates
  const check = yield* BearerCheck.make

  // The Authorization middleware's check and span. A plain span, not Effect.fn: this is no
  // service method, and Effect.fn captures a stack trace on every call.
  const bearerAuth = (
    handler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, RouteServices | CurrentCaller>
  ) =>
    Effect.withSpan(
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        return yield* check(request.headers["authorization"] === undefined ? undefined : yield* decodeBearer, {
          refused: (error) => Effect.succeed(unauthorized(error)),
          admitted: (caller) => Effect.provideService(handler, CurrentCaller, caller)
        })
      }),
      "Authorization.bearerAuth"
    )

  const list = Effect.gen(function*() {
    const decoded = decodeQuery(yield* HttpServerRequest.ParsedSearchParams)
    if (Result.isFailure(decoded)) return invalid(decoded.failure, "query")
    const query = decoded.success
    const limit = query.limit ?? PAGE_LIMIT_DEFAULT
    return yield* orErrorResponse(Effect.map(
      pets.list({ limit: limit + 1, status: query.status, after: query.cursor }),
      (rows) => {
        const { link, page } = keysetPage(rows, {
          limit,
          path: "/v1/pets",
          filters: [["status", query.status]],
          cursorOf: encodeCursor
        })
        return jsonText(`[${page.map(petJson).join(",")}]`, 200, link === undefined ? {} : { link })
      }
    ))
  })

  const get = Effect.gen(function*() {
    const decoded = decodeParams((yield* HttpRouter.RouteContext).params)
    if (Result.isFailure(decoded)) return invalid(decoded.failure, "path")
    if ((yield* Clock.currentTimeMillis) >= SUNSET.epochMillis) {
      return errorResponse(toHttpError(
        new Gone({ message: `GET /v1/pets/{petId} was removed on ${SUNSET.httpDate}; use GET /v1/pets` })
      ))
    }
    return yield* orErrorResponse(Effect.map(pets.get(decoded.success.petId), (pet) => jsonText(petJson(pet), 200, {})))
  })

  const create = Effect.gen(function*() {
    const caller = yield* CurrentCaller
    if (!allows(caller.scope, "write")) {
      return errorResponse(toHttpError(new InsufficientScope({ scope: caller.scope, operation: createPet.identifier })))
    }
    const request = yield* HttpServerRequest.HttpServerRequest
    const contentType = request.headers["content-type"]
    if (!isJsonContentType(contentType) || !isJsonMediaType(contentType)) {
      return errorResponse(unsupportedMediaType(contentType))
    }
    // Headers before the body, as HttpApi decodes them; without the header this is one lookup.
    let key: IdempotencyKey | undefined
    if (request.headers["idempotency-key"] !== undefined) {
      const headers = decodeCreateHeaders(request.headers)
      if (Result.isFailure(headers)) return invalid(headers.failure, "headers")
      key = headers.success["idempotency-key"]
    }
    // A body that cannot be read (too large, cut off) is the framework's to answer, as under HttpApi.
    const bytes = new Uint8Array(yield* Effect.orDie(request.arrayBuffer))
    const decoded = decodePayload(bytes)
    if (Result.isFailure(decoded)) return invalid(decoded.failure, "body")
    const pet = new NewPet(decoded.success, { disableChecks: true })
    if (key === undefined) {
      return yield* orErrorResponse(Effect.map(
        pets.create(pet),
        (pet) => jsonText(petJson(pet), 201, { location: `/v1/pets/${pet.id}` })
      ))
    }
    return yield* IdempotentResponses.respond(idempotent.run(
      new IdempotentRequest(
        { keyId: caller.keyId, key, fingerprint: fingerprintOf(createPetIdentity(pet)) },
        { disableChecks: true }
      ),
      Effect.map(pets.create(pet), (pet) => IdempotentResponses.created(petJson(pet), `/v1/pets/${pet.id}`))
    ))
  })

  const listOrderPage = Effect.gen(function*() {
    const decoded = decodeOrderQuery(yield* HttpServerRequest.ParsedSearchParams)
    if (Result.isFailure(decoded)) return invalid(decoded.failure, "query")
    const query = decoded.success
    const limit = query.limit ?? PAGE_LIMIT_DEFAULT
    return yield* orErrorResponse(Effect.map(
      orders.list({ limit: limit + 1, status: query.status, petId: query.petId, after: query.cursor }),
      (rows) => {
        const { link, page } = keysetPage(rows, {
          limit,
          path: "/v1/store/orders",
          filters: [["status", query.status], ["petId", query.petId]],
          cursorOf: encodeOrderCursor
        })
        return json(page.map((order) => encodeOrder(order)), 200, link === undefined ? {} : { link })
      }
    ))
  })

  const getOne = Effect.gen(function*() {
    const decoded = decodeOrderParams((yield* HttpRouter.RouteContext).params)
    if (Result.isFailure(decoded)) return invalid(decoded.failure, "path")
    return yield* orErrorResponse(Effect.map(orders.get(decoded.success.orderId), (order) => json(encodeOrder(order), 200, {})))
  })

  yield* router.add("GET", listPets.path, bearerAuth(list))
  yield* router.add("GET", getPet.path, bearerAuth(get))
  yield* router.add("POST", createPet.path, bearerAuth(create))
  yield* router.add("GET", listOrders.path, bearerAuth(listOrderPage))
  yield* router.add("GET", getOrder.path, bearerAuth(getOne))
}))
