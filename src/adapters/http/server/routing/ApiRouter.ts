/**
 * Every /v1 operation, served by one router compiled at start-up from the one `Api`.
 * For each endpoint (HttpApi.reflect) it compiles the decoders of the endpoint's own
 * schemas once and applies the one implementation of each middleware the endpoint
 * declares, in the contract's order: Authorization (401, with the rate limits), then
 * WriteScope (403), then JsonContentType (415), then the input (RequestValidation: 400
 * naming the field), then, for an endpoint whose headers declare `Idempotency-Key`, the
 * idempotent create. An endpoint annotated `deprecated` answers 410 from the sunset on.
 * Handlers are a record keyed by operation id; every domain error they fail with becomes
 * its answer through toHttpError. HttpApiBuilder's per-endpoint machinery (its
 * middleware chain, effectful decoding and encoding of every slot, errors encoded
 * through schemas) cost most of a request's CPU (docs/decisions/serving-path.md); the
 * Api stays the one source of the OpenAPI document and the typed client.
 */
import { ByteSize, Clock, Context, Effect, Result, Schema, type SchemaIssue, SchemaParser } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import {
  HttpApi,
  type HttpApiEndpoint,
  type HttpApiGroup,
  type HttpApiMiddleware,
  type HttpApiSchema,
  OpenApi
} from "effect/http-api"
import { Gone, InsufficientScope, InvalidInput, type Unauthorized } from "../../../../domain/Errors.ts"
import type { IdempotencyKey } from "../../../../domain/idempotency/IdempotencyKey.ts"
import { IdempotentRequest } from "../../../../domain/idempotency/IdempotentRequest.ts"
import type { Caller } from "../../../../domain/keys/Caller.ts"
import { PhotoUrlRefused } from "../../../../domain/photos/PhotoErrors.ts"
import { allows } from "../../../../domain/keys/KeyScope.ts"
import { IdempotentCreates } from "../../../../ports/idempotency/IdempotentCreates.ts"
import { fingerprintOf } from "../../../idempotency/RequestFingerprint.ts"
import { Api } from "../../api/Api.ts"
import { challengeOf, PayloadTooLarge } from "../../api/ApiErrors.ts"
import { Authorization } from "../../api/Authorization.ts"
import { isJsonContentType, JSON_MEDIA_TYPE, JsonContentType, unsupportedMediaType } from "../../api/JsonContentType.ts"
import { validBodyDecode } from "../../api/JsonInt64.ts"
import { EXPIRES_PARAM, PhotoUrlAuthorization, SIGNATURE_PARAM } from "../../api/PhotoUrlAuthorization.ts"
import { RequestValidation } from "../../api/RequestValidation.ts"
import { SUNSET } from "../../api/Sunset.ts"
import { WriteScope } from "../../api/WriteScope.ts"
import * as BearerCheck from "../policies/BearerCheck.ts"
import { errorResponse, MAX_BODY_SIZE } from "../policies/ErrorResponses.ts"
import { type DomainError, headersOf, toHttpError } from "../policies/HttpErrors.ts"
import * as IdempotentResponses from "../policies/IdempotentResponses.ts"
import * as Spans from "../../../observability/Spans.ts"
import { PhotoUrls } from "../photos/PhotoUrls.ts"
import type { Reply } from "./Reply.ts"
import { pathOf } from "./RouteTable.ts"

type Endpoints = typeof Api extends HttpApi.HttpApi<string, infer Groups> ? HttpApiGroup.Endpoints<Groups> : never

/** The operation ids of the Api (`listPets`, `createPet`, …). */
export type OperationId = Endpoints["identifier"]

type EndpointOf<Id extends OperationId> = Extract<Endpoints, { readonly identifier: Id }>

// A slot the endpoint does not declare is `never`; its handler sees `undefined`.
type Decoded<S> = [S] extends [never] ? undefined : S extends Schema.Top ? S["Type"] : undefined

/**
 * The body of an operation that takes bytes (a payload of HttpApiSchema.StreamUint8Array,
 * with or without a form beside it): its declared type and all of it, read within the
 * router's raw body limit. The handler decodes it.
 */
export interface RawBody {
  readonly contentType: string
  readonly bytes: Uint8Array
}

type PayloadInput<S> = [Extract<S, HttpApiSchema.StreamUint8Array>] extends [never] ? Decoded<S> : RawBody

/** What a handler gets: the endpoint's decoded input and, where it declares Authorization, the caller. */
export interface Input<Id extends OperationId> {
  readonly params: Decoded<HttpApiEndpoint.Params<EndpointOf<Id>>>
  readonly query: Decoded<HttpApiEndpoint.Query<EndpointOf<Id>>>
  readonly headers: Decoded<HttpApiEndpoint.Headers<EndpointOf<Id>>>
  readonly payload: PayloadInput<HttpApiEndpoint.Payload<EndpointOf<Id>>>
  /** The caller; undefined where the endpoint does not declare Authorization, or a signed URL let the request in. */
  readonly caller: [Authorization] extends [HttpApiEndpoint.Middleware<EndpointOf<Id>>] ? Caller : undefined
}

/** An operation: its input to its reply, or a domain error that toHttpError answers. */
export type Operation<Id extends OperationId, R> = (input: Input<Id>) => Effect.Effect<Reply, DomainError, R>

/**
 * An idempotent create (its headers declare `Idempotency-Key`): the operation, and the
 * identity of its input that the key is bound to (createPetIdentity, placeOrderIdentity,
 * createWebhookIdentity).
 *
 * A create whose input needs a check its schemas cannot make, one that stores nothing but
 * may take a while (createWebhook resolves the URL's host), gives `prepare` instead of
 * `handle`: the check, which then gives the create. It runs before the key is looked at,
 * so a slow check holds no store transaction, and its refusal is answered as a malformed
 * input is, kept for no key.
 */
export type IdempotentOperation<Id extends OperationId, R> =
  | {
    readonly identity: (input: Input<Id>) => string
    readonly handle: Operation<Id, R>
  }
  | {
    readonly identity: (input: Input<Id>) => string
    readonly prepare: (input: Input<Id>) => Effect.Effect<Effect.Effect<Reply, DomainError, R>, DomainError, R>
  }

type HandlerOf<Id extends OperationId, R> = "idempotency-key" extends keyof Input<Id>["headers"]
  ? IdempotentOperation<Id, R>
  : Operation<Id, R>

/** One handler per operation of the Api: a missing one is a type error. */
export type Handlers<R> = { readonly [Id in OperationId]: HandlerOf<Id, R> }

/** The header an idempotent create declares. */
const IDEMPOTENCY_KEY = "idempotency-key"

/** The middleware this router implements; an endpoint declaring any other cannot be served. */
const IMPLEMENTED: ReadonlySet<unknown> = new Set<unknown>([
  Authorization,
  WriteScope,
  JsonContentType,
  RequestValidation,
  PhotoUrlAuthorization
])

/** What the router provides a route's handler. */
type RouteServices = HttpServerRequest.HttpServerRequest | HttpServerRequest.ParsedSearchParams | HttpRouter.RouteContext

type Response = HttpServerResponse.HttpServerResponse

// HttpApiSchema.StreamUint8Array's schemas say what they are by their `_tag` (its guard is internal).
const isStreamUint8Array = (schema: Schema.Top): boolean =>
  (schema as { readonly _tag?: unknown })._tag === "StreamUint8Array"

// The endpoints' schemas are untyped here; the handlers' input types come from the Api's types.
const decoder = (schema: Schema.Top) => SchemaParser.decodeUnknownResult(schema as unknown as Schema.Decoder<unknown>)

/** A 401 with its challenge. */
const unauthorized = (error: Unauthorized) =>
  errorResponse(toHttpError(error), { "www-authenticate": challengeOf(error.credential === "invalid") })

/** HttpApi's own answer to undecodable input where RequestValidation is not declared. */
const malformed = errorResponse({ code: "invalid_request", message: "the request is malformed", status: 400 })

const replied = (reply: Reply): Response =>
  reply.bytes !== undefined
    ? HttpServerResponse.uint8Array(reply.bytes, {
      status: reply.status,
      contentType: reply.contentType,
      ...(reply.headers === undefined ? {} : { headers: reply.headers })
    })
    : reply.eventStream !== undefined
    ? HttpServerResponse.stream(reply.eventStream, {
      contentType: "text/event-stream",
      // No proxy may buffer or transform the stream (nginx honours X-Accel-Buffering).
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
    : reply.status === 204 || reply.status === 302 || reply.status === 304
    ? HttpServerResponse.empty({ status: reply.status, ...(reply.headers === undefined ? {} : { headers: reply.headers }) })
    : HttpServerResponse.text(reply.body, {
    status: reply.status,
    contentType: JSON_MEDIA_TYPE,
    ...(reply.headers === undefined ? {} : { headers: reply.headers })
  })

const answered = <R>(effect: Effect.Effect<Reply, DomainError, R>): Effect.Effect<Response, never, R> =>
  Effect.match(effect, { onSuccess: replied, onFailure: (error) => errorResponse(toHttpError(error), headersOf(error)) })

/** The header names a headers schema declares, to skip decoding a request that sends none of them. */
const declaredNames = (schema: Schema.Top): ReadonlyArray<string> =>
  schema.ast._tag === "Objects" ? schema.ast.propertySignatures.map((property) => String(property.name)) : []

/** The route of one endpoint, its decoders and middleware compiled now. */
const compile = <R>(
  endpoint: HttpApiEndpoint.Top,
  middleware: ReadonlySet<unknown>,
  annotations: Context.Context<never>,
  handler: Operation<OperationId, R> | IdempotentOperation<OperationId, R>,
  services: {
    readonly check: Effect.Success<typeof BearerCheck.make>
    readonly idempotent: IdempotentCreates["Service"]
    readonly photoUrls: PhotoUrls["Service"]
    readonly rawBodyMaxBytes: number
  }
): Effect.Effect<Response, never, R | RouteServices> => {
  for (const each of middleware) {
    if (!IMPLEMENTED.has(each)) {
      throw new Error(`${endpoint.identifier}: no implementation of middleware ${(each as HttpApiMiddleware.AnyService).key}`)
    }
  }
  const signedUrl = middleware.has(PhotoUrlAuthorization)
  if (signedUrl && middleware.has(Authorization)) throw new Error(`${endpoint.identifier}: a signed URL replaces Authorization`)
  const authorization = middleware.has(Authorization) || signedUrl
  const writeScope = middleware.has(WriteScope)
  if (writeScope && !authorization) throw new Error(`${endpoint.identifier}: WriteScope needs Authorization`)
  const jsonContentType = middleware.has(JsonContentType)
  const invalid = middleware.has(RequestValidation)
    ? (issue: SchemaIssue.Issue, whole: string) => errorResponse(toHttpError(InvalidInput.fromIssue(issue, whole)))
    : () => malformed

  // Decoded as HttpApiBuilder decodes them, so issues and messages match.
  const decodeParams = endpoint.params === undefined ? undefined : decoder(endpoint.params)
  const decodeQuery = endpoint.query === undefined ? undefined : decoder(Schema.toCodecArrayFromSingle(endpoint.query))
  const decodeHeaders = endpoint.headers === undefined ? undefined : decoder(endpoint.headers)
  const headerNames = endpoint.headers === undefined ? [] : declaredNames(endpoint.headers)
  // A request sending none of the declared headers decodes as `{}` does: looked up once, here.
  const noHeaders = decodeHeaders === undefined ? undefined : decodeHeaders({})
  // An upload: its bytes are read whole, within their own limit, in any of its media types.
  const rawTypes = [...endpoint.payload].some(([, { schemas }]) => schemas.some(isStreamUint8Array))
    ? [...endpoint.payload.keys()]
    : undefined
  if (rawTypes === undefined && endpoint.payload.size > 1) {
    throw new Error(`${endpoint.identifier}: only one payload media type is served`)
  }
  const [payloadType, payload] = rawTypes === undefined ? [...endpoint.payload][0] ?? [] : []
  // A JSON body of another media type (a merge patch) is accepted as application/json too.
  const mediaTypes = payloadType === undefined || payloadType === JSON_MEDIA_TYPE
    ? [JSON_MEDIA_TYPE]
    : [payloadType, JSON_MEDIA_TYPE]
  // The media types a body must declare: JSON's where the endpoint declares JsonContentType, an upload's own.
  const checkedTypes = rawTypes ?? (jsonContentType ? mediaTypes : undefined)
  const decodeBody = payload === undefined ? undefined : decoder(Schema.Union(payload.schemas))
  // Valid bytes take the body schema's compiled steps; the schema explains any refusal.
  const validBody = payload?.schemas.length === 1 ? validBodyDecode(payload.schemas[0]!) : undefined
  const decodePayload = decodeBody === undefined || validBody === undefined
    ? decodeBody
    : (bytes: Uint8Array) => {
      const valid = validBody(bytes)
      return Result.isSuccess(valid) ? Result.succeed(valid.success) : decodeBody(bytes)
    }
  const idempotent = headerNames.includes(IDEMPOTENCY_KEY)
  const prepare = typeof handler === "function" || !("prepare" in handler) ? undefined : handler.prepare
  const operation: Operation<OperationId, R> = typeof handler === "function"
    ? handler
    : "handle" in handler
    ? handler.handle
    : (input) => Effect.flatten(handler.prepare(input))
  const identity = typeof handler === "function" ? undefined : handler.identity
  if (idempotent && identity === undefined) throw new Error(`${endpoint.identifier}: an idempotent create needs its identity`)
  const deprecated = Context.getOrElse(annotations, OpenApi.Deprecated, () => false)
  const gone = errorResponse(toHttpError(
    new Gone({
      message: `${endpoint.method} ${endpoint.path.replace(/:(\w+)/g, "{$1}")} was removed on ${SUNSET.httpDate}; use ${SUNSET.successor}`
    })
  ))

  // What runs after the input is read: the sunset, then the operation, idempotent or not.
  const run = (
    input: { readonly headers?: unknown; readonly caller: Caller | undefined },
    clock: Clock.Clock
  ): Effect.Effect<Response, never, R> => {
    if (deprecated && clock.currentTimeMillisUnsafe() >= SUNSET.epochMillis) return Effect.succeed(gone)
    const typed = input as Input<OperationId>
    const key = idempotent ? (input.headers as { readonly [IDEMPOTENCY_KEY]?: IdempotencyKey })[IDEMPOTENCY_KEY] : undefined
    if (key === undefined) return answered(operation(typed))
    const request = new IdempotentRequest(
      { keyId: input.caller!.keyId, key, fingerprint: fingerprintOf(identity!(typed)) },
      { disableChecks: true }
    )
    const create = (created: Effect.Effect<Reply, DomainError, R>) =>
      IdempotentResponses.respond(services.idempotent.run(request, IdempotentResponses.kept(created)))
    if (prepare === undefined) return create(operation(typed))
    return Effect.matchEffect(prepare(typed), {
      onSuccess: create,
      onFailure: (error) => Effect.succeed(errorResponse(toHttpError(error), headersOf(error)))
    })
  }

  // The checks and the decoding read the request from the fiber's context directly: every
  // effect here is a step of the runtime that each request pays for.
  const serve = (caller: Caller | undefined): Effect.Effect<Response, never, R | RouteServices> =>
    Effect.withFiber((fiber) => {
      if (writeScope && !allows(caller!.scope, "write")) {
        return Effect.succeed(
          errorResponse(toHttpError(new InsufficientScope({ scope: caller!.scope, operation: endpoint.identifier })))
        )
      }
      const context = fiber.context as Context.Context<RouteServices>
      const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
      if (checkedTypes !== undefined) {
        const contentType = request.headers["content-type"]
        if (!isJsonContentType(contentType, checkedTypes)) {
          return Effect.succeed(errorResponse(unsupportedMediaType(contentType, checkedTypes)))
        }
      }
      const input: {
        params?: unknown
        query?: unknown
        headers?: unknown
        payload?: unknown
        caller: Caller | undefined
      } = { caller }
      if (decodeParams !== undefined) {
        const decoded = decodeParams(Context.getUnsafe(context, HttpRouter.RouteContext).params)
        if (Result.isFailure(decoded)) return Effect.succeed(invalid(decoded.failure, "path"))
        input.params = decoded.success
      }
      if (decodeHeaders !== undefined) {
        const decoded = headerNames.some((name) => request.headers[name] !== undefined)
          ? decodeHeaders(request.headers)
          : noHeaders!
        if (Result.isFailure(decoded)) return Effect.succeed(invalid(decoded.failure, "headers"))
        input.headers = decoded.success
      }
      if (decodeQuery !== undefined) {
        const decoded = decodeQuery(Context.getUnsafe(context, HttpServerRequest.ParsedSearchParams))
        if (Result.isFailure(decoded)) return Effect.succeed(invalid(decoded.failure, "query"))
        input.query = decoded.success
      }
      const clock = fiber.getRef(Clock.Clock)
      if (rawTypes !== undefined) return readRaw(request, input, clock)
      if (decodePayload === undefined) return run(input, clock)
      // A body that cannot be read (too large, cut off) is the framework's to answer, as under HttpApi.
      return Effect.matchEffect(Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, MAX_BODY_SIZE), {
        onFailure: Effect.die,
        onSuccess: (body) => {
          const decoded = decodePayload(new Uint8Array(body))
          if (Result.isFailure(decoded)) return Effect.succeed(invalid(decoded.failure, "body"))
          input.payload = decoded.success
          return run(input, clock)
        }
      })
    })

  // A raw body (its type checked already): refused at once when its declared length is over the
  // limit, and while it arrives when it has none (the connection then closes: the rest is unread).
  const readRaw = (
    request: HttpServerRequest.HttpServerRequest,
    input: { payload?: unknown; readonly caller: Caller | undefined },
    clock: Clock.Clock
  ): Effect.Effect<Response, never, R> => {
    const limit = services.rawBodyMaxBytes
    const tooLarge = errorResponse(
      new PayloadTooLarge({ message: `the request body exceeds ${limit} bytes` }),
      { connection: "close" }
    )
    if (Number(request.headers["content-length"] ?? 0) > limit) return Effect.succeed(tooLarge)
    return Effect.matchEffect(Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit)), {
      onFailure: (error) =>
        HttpServerError.isHttpServerError(error) && error.reason._tag === "RequestParseError" &&
          error.reason.reason === "BodyTooLarge"
          ? Effect.succeed(tooLarge)
          : Effect.die(error),
      onSuccess: (body) => {
        // Its type was checked with the others' (checkedTypes).
        input.payload = { contentType: request.headers["content-type"]!, bytes: new Uint8Array(body) } satisfies RawBody
        return run(input, clock)
      }
    })
  }

  if (!authorization) return serve(undefined)
  const answers = { refused: (error: Unauthorized) => Effect.succeed(unauthorized(error)), admitted: serve }
  const forbidden = errorResponse(toHttpError(new PhotoUrlRefused()))
  const check = Effect.withFiber((fiber) => {
    const context = fiber.context as Context.Context<RouteServices>
    const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
    if (signedUrl) {
      // A signature present decides alone: a bad one is 403 even beside a valid key.
      const query = Context.getUnsafe(context, HttpServerRequest.ParsedSearchParams)
      const signature = query[SIGNATURE_PARAM]
      if (signature !== undefined) {
        const expires = query[EXPIRES_PARAM]
        const valid = typeof signature === "string" && (expires === undefined || typeof expires === "string") &&
          services.photoUrls.verify(pathOf(request.url), expires, signature, fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
        return valid ? serve(undefined) : Effect.succeed(forbidden)
      }
    }
    return services.check(request.headers["authorization"], answers)
  })
  // The key check's span, made only when an exporter reads it (Spans).
  return check.pipe(Spans.span("Authorization.bearerAuth"))
}

/** The routes of every /v1 operation, served by `handlers`; a raw body (an upload) may have up to `rawBodyMaxBytes`. */
export const layer = <R, E, RH>(handlers: Effect.Effect<Handlers<R>, E, RH>, options: { readonly rawBodyMaxBytes: number }) =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const made = yield* handlers
    const services = {
      check: yield* BearerCheck.make,
      idempotent: yield* IdempotentCreates,
      photoUrls: yield* PhotoUrls,
      rawBodyMaxBytes: options.rawBodyMaxBytes
    }
    const routes: Array<HttpRouter.Route<never, R>> = []
    HttpApi.reflect(Api, {
      onGroup: () => {},
      onEndpoint: ({ endpoint, mergedAnnotations, middleware }) => {
        const handler = made[endpoint.identifier as OperationId] as
          | Operation<OperationId, R>
          | IdempotentOperation<OperationId, R>
          | undefined
        if (handler === undefined) throw new Error(`no handler for operation ${endpoint.identifier}`)
        routes.push(HttpRouter.route(
          endpoint.method,
          endpoint.path as HttpRouter.PathInput,
          compile(endpoint, middleware, mergedAnnotations, handler, services)
        ))
      }
    })
    yield* router.addAll(routes)
  }))
