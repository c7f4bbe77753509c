/**
 * Key and webhook management over HTTP, for the keys and webhooks commands while the
 * service holds the embedded store (one process per data directory, so a command cannot
 * open it itself). Served on its own loopback-only port,
 * never on the API's; each request must carry the admin token, which only the service's
 * data directory holds (AdminFile).
 */
import { timingSafeEqual } from "node:crypto"
import { Duration, Effect, Layer, Redacted, Schema } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { InvalidInput, StoreUnavailable } from "../../../domain/Errors.ts"
import type { KeyNameInUse, KeyNotFound } from "../../../domain/keys/KeyErrors.ts"
import type { WebhookNotFound } from "../../../domain/webhooks/WebhookErrors.ts"
import { ApiKeyAdmin, type IssuedKey } from "../../../ports/keys/ApiKeyAdmin.ts"
import { WebhookAdmin } from "../../../ports/webhooks/WebhookAdmin.ts"
import { digestOf } from "../../../application/keys/KeyIssuer.ts"
import {
  AddWebhookJson,
  ADMIN_PATHS,
  CreateJson,
  IssuedJson,
  IssuedWebhookJson,
  KeysJson,
  RefusalJson,
  RemovedWebhookJson,
  RevokeJson,
  RotatedJson,
  RotateJson,
  toJson,
  WebhookRefJson,
  WebhooksJson
} from "./AdminJson.ts"

const STATUS = {
  KeyNotFound: 404,
  KeyNameInUse: 409,
  WebhookNotFound: 404,
  StoreUnavailable: 503,
  Unauthorized: 401,
  InvalidInput: 400
} as const

const refusal = (error: typeof RefusalJson.Type) =>
  HttpServerResponse.jsonUnsafe(Schema.encodeSync(RefusalJson)(error), { status: STATUS[error.error] })

const subjectOf = (error: KeyNotFound | KeyNameInUse | WebhookNotFound | InvalidInput | StoreUnavailable): string => {
  switch (error._tag) {
    case "KeyNotFound":
      return error.ref
    case "KeyNameInUse":
      return error.name
    case "WebhookNotFound":
      return String(error.id)
    default:
      return ""
  }
}

const refused = (error: KeyNotFound | KeyNameInUse | WebhookNotFound | InvalidInput | StoreUnavailable) =>
  Effect.succeed(refusal({
    error: error._tag,
    message: error.message,
    subject: subjectOf(error),
    ...(error._tag === "KeyNotFound" && error.revokedAt !== undefined ? { revokedAt: error.revokedAt } : {})
  }))

const issuedJson = (issued: IssuedKey) => ({ key: Redacted.value(issued.key), record: toJson(issued.record) })

/**
 * Serves the admin routes on the HttpServer in context (the admin port), over the
 * ApiKeyAdmin and WebhookAdmin in context, for requests bearing `token`.
 */
export const layer = (
  token: Redacted.Redacted<string>
): Layer.Layer<never, never, ApiKeyAdmin | WebhookAdmin | HttpServer.HttpServer> =>
  Layer.unwrap(Effect.gen(function*() {
    const admin = yield* ApiKeyAdmin
    const webhooks = yield* WebhookAdmin
    // A router of its own: HttpRouter.serve takes the router from the layer memo map,
    // which the service's API shares, and would serve these routes on the API's port too.
    const router = yield* HttpRouter.make
    const expected = digestOf(Redacted.value(token))

    const authorized = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Effect.gen(function*() {
        const header = (yield* HttpServerRequest.HttpServerRequest).headers["authorization"] ?? ""
        const presented = digestOf(header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "")
        if (!timingSafeEqual(presented, expected)) {
          return refusal({ error: "Unauthorized", message: "the admin token is missing or wrong", subject: "" })
        }
        return yield* handler
      })

    const body = <A>(schema: Schema.Decoder<A>) =>
      HttpServerRequest.schemaBodyJson(schema).pipe(
        Effect.mapError((error) => ({ _tag: "BadBody" as const, message: String(error.message) }))
      )
    const orBadBody = <R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, { _tag: "BadBody"; message: string }, R>) =>
      Effect.catchTag(effect, "BadBody", (error) =>
        Effect.succeed(refusal({ error: "InvalidInput", message: error.message, subject: "" })))

    yield* router.add("GET", ADMIN_PATHS.keys, authorized(
      admin.list.pipe(
        Effect.map((keys) => HttpServerResponse.jsonUnsafe(Schema.encodeSync(KeysJson)({ keys: keys.map(toJson) }))),
        Effect.catch(refused)
      )
    ))
    yield* router.add("POST", ADMIN_PATHS.keys, authorized(orBadBody(Effect.gen(function*() {
      const request = yield* body(CreateJson)
      return yield* admin.create({
        name: request.name,
        scope: request.scope,
        lifetime: request.lifetimeMillis === null ? undefined : Duration.millis(request.lifetimeMillis)
      }).pipe(
        Effect.map((issued) => HttpServerResponse.jsonUnsafe(Schema.encodeSync(IssuedJson)(issuedJson(issued)), { status: 201 })),
        Effect.catch(refused)
      )
    }))))
    yield* router.add("POST", ADMIN_PATHS.revoke, authorized(orBadBody(Effect.gen(function*() {
      const request = yield* body(RevokeJson)
      return yield* admin.revoke(request.ref).pipe(
        Effect.map((keys) => HttpServerResponse.jsonUnsafe(Schema.encodeSync(KeysJson)({ keys: keys.map(toJson) }))),
        Effect.catch(refused)
      )
    }))))
    yield* router.add("POST", ADMIN_PATHS.rotate, authorized(orBadBody(Effect.gen(function*() {
      const request = yield* body(RotateJson)
      return yield* admin.rotate(request.name, Duration.millis(request.graceMillis)).pipe(
        Effect.map(({ issued, previous }) =>
          HttpServerResponse.jsonUnsafe(
            Schema.encodeSync(RotatedJson)({ issued: issuedJson(issued), previous: previous.map(toJson) }),
            { status: 201 }
          )
        ),
        Effect.catch(refused)
      )
    }))))

    const encodeWebhooks = Schema.encodeSync(WebhooksJson)
    const encodeIssuedWebhook = Schema.encodeSync(IssuedWebhookJson)
    yield* router.add("GET", ADMIN_PATHS.webhooks, authorized(
      webhooks.list.pipe(
        Effect.map((all) => HttpServerResponse.jsonUnsafe(encodeWebhooks({ webhooks: all }))),
        Effect.catch(refused)
      )
    ))
    yield* router.add("POST", ADMIN_PATHS.webhooks, authorized(orBadBody(Effect.gen(function*() {
      const request = yield* body(AddWebhookJson)
      return yield* webhooks.add(request).pipe(
        Effect.map((issued) => HttpServerResponse.jsonUnsafe(encodeIssuedWebhook(issued), { status: 201 })),
        Effect.catch(refused)
      )
    }))))
    yield* router.add("POST", ADMIN_PATHS.webhookRemove, authorized(orBadBody(Effect.gen(function*() {
      const { id } = yield* body(WebhookRefJson)
      return yield* webhooks.remove(id).pipe(
        Effect.map((webhook) => HttpServerResponse.jsonUnsafe(Schema.encodeSync(RemovedWebhookJson)({ webhook }))),
        Effect.catch(refused)
      )
    }))))
    yield* router.add("POST", ADMIN_PATHS.webhookRotate, authorized(orBadBody(Effect.gen(function*() {
      const { id } = yield* body(WebhookRefJson)
      return yield* webhooks.rotate(id).pipe(
        Effect.map((rotated) => HttpServerResponse.jsonUnsafe(encodeIssuedWebhook(rotated), { status: 201 })),
        Effect.catch(refused)
      )
    }))))
    return HttpServer.serve(router.asHttpEffect())
  }))
