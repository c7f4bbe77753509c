/**
 * The admin routes' JSON, shared by the routes and their clients (ApiKeyAdminHttp,
 * WebhookAdminHttp): key records and subscriptions with times as RFC 3339 strings and
 * ids as decimal strings, and refusals by the domain error's tag.
 */
import { Schema } from "effect"
import { ApiKey, KeyDigest } from "../../../domain/keys/ApiKey.ts"
import { KeyId } from "../../../domain/keys/KeyId.ts"
import { KeyName } from "../../../domain/keys/KeyName.ts"
import { KeyScope } from "../../../domain/keys/KeyScope.ts"
import { WebhookId } from "../../../domain/webhooks/WebhookId.ts"
import { WebhookSecret } from "../../../domain/webhooks/WebhookSecret.ts"
import { WebhookEventTypes, WebhookSubscription } from "../../../domain/webhooks/WebhookSubscription.ts"

/** Paths of the admin routes. */
export const ADMIN_PATHS = {
  keys: "/admin/keys",
  revoke: "/admin/keys/revoke",
  rotate: "/admin/keys/rotate",
  webhooks: "/admin/webhooks",
  webhookRemove: "/admin/webhooks/remove",
  webhookRotate: "/admin/webhooks/rotate"
} as const

const Time = Schema.NullOr(Schema.DateTimeUtcFromString)

/** A key record on the admin wire. */
export const ApiKeyJson = Schema.Struct({
  id: KeyId,
  name: KeyName,
  scope: KeyScope,
  digest: KeyDigest,
  createdAt: Schema.DateTimeUtcFromString,
  expiresAt: Time,
  lastUsedAt: Time,
  revokedAt: Time
})

/** A record as {@link ApiKeyJson} carries it. */
export const toJson = (key: ApiKey): typeof ApiKeyJson.Type => ({
  id: key.id,
  name: key.name,
  scope: key.scope,
  digest: key.digest,
  createdAt: key.createdAt,
  expiresAt: key.expiresAt ?? null,
  lastUsedAt: key.lastUsedAt ?? null,
  revokedAt: key.revokedAt ?? null
})

/** The record {@link ApiKeyJson} carries. */
export const fromJson = (json: typeof ApiKeyJson.Type): ApiKey =>
  new ApiKey({
    ...json,
    expiresAt: json.expiresAt ?? undefined,
    lastUsedAt: json.lastUsedAt ?? undefined,
    revokedAt: json.revokedAt ?? undefined
  }, { disableChecks: true })

/** `GET /admin/keys`, `POST /admin/keys/revoke`: records. */
export const KeysJson = Schema.Struct({ keys: Schema.Array(ApiKeyJson) })

/** `POST /admin/keys`: what to issue. */
export const CreateJson = Schema.Struct({ name: KeyName, scope: KeyScope, lifetimeMillis: Schema.NullOr(Schema.Number) })

/** `POST /admin/keys/revoke`: an id, or a name. */
export const RevokeJson = Schema.Struct({ ref: Schema.String })

/** `POST /admin/keys/rotate`: the name, and how long the old keys keep working. */
export const RotateJson = Schema.Struct({ name: KeyName, graceMillis: Schema.Number })

/** A key just issued: shown once. */
export const IssuedJson = Schema.Struct({ key: Schema.String, record: ApiKeyJson })

/** The rotation's new key and the keys it replaces. */
export const RotatedJson = Schema.Struct({ issued: IssuedJson, previous: Schema.Array(ApiKeyJson) })

/** A subscription on the admin wire. */
export const WebhookJson = Schema.toCodecJson(WebhookSubscription)

/** `GET /admin/webhooks`: every subscription. */
export const WebhooksJson = Schema.Struct({ webhooks: Schema.Array(WebhookJson) })

/** `POST /admin/webhooks`: the URL as given (the service judges it) and the event types. */
export const AddWebhookJson = Schema.Struct({ url: Schema.String, types: WebhookEventTypes })

/** `POST /admin/webhooks/remove`, `POST /admin/webhooks/rotate`: which subscription. */
export const WebhookRefJson = Schema.Struct({ id: Schema.toCodecJson(WebhookId) })

/** A subscription and its new secret, shown once; after a rotation, until when the old one signs. */
export const IssuedWebhookJson = Schema.Struct({
  webhook: WebhookJson,
  secret: WebhookSecret,
  previousSignsUntil: Schema.optionalKey(Schema.DateTimeUtcFromString)
})

/** `POST /admin/webhooks/remove`: the subscription removed. */
export const RemovedWebhookJson = Schema.Struct({ webhook: WebhookJson })

/**
 * A refusal: the domain error's tag and message, what it names (KeyNotFound's reference,
 * KeyNameInUse's name, WebhookNotFound's id), and when that was revoked (KeyNotFound).
 */
export const RefusalJson = Schema.Struct({
  error: Schema.Literals(["KeyNotFound", "KeyNameInUse", "WebhookNotFound", "StoreUnavailable", "Unauthorized", "InvalidInput"]),
  message: Schema.String,
  subject: Schema.String,
  revokedAt: Schema.optional(Schema.DateTimeUtcFromString)
})
