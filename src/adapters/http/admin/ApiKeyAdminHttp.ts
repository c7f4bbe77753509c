import { Duration, Effect, Layer, Redacted, Schema } from "effect"
import { StoreUnavailable } from "../../../domain/Errors.ts"
import { KeyNameInUse, KeyNotFound } from "../../../domain/keys/KeyErrors.ts"
import type { KeyName } from "../../../domain/keys/KeyName.ts"
import { ApiKeyAdmin, type KeyRequest } from "../../../ports/keys/ApiKeyAdmin.ts"
import { AdminCall } from "./AdminCall.ts"
import type { AdminAddress } from "./AdminFile.ts"
import { ADMIN_PATHS, CreateJson, fromJson, IssuedJson, KeysJson, RevokeJson, RotatedJson, RotateJson } from "./AdminJson.ts"

/**
 * ApiKeyAdmin through a running service's admin routes (AdminRoutes), for the command
 * while the service holds the embedded store. The service does the work, so its own key
 * cache sees each change at once.
 */
export const make = (address: AdminAddress) => {
  const call = <A>(method: "GET" | "POST", path: string, response: Schema.Decoder<A>, body?: unknown) =>
    Effect.gen(function*() {
      const answer = yield* AdminCall.send(address, method, path, response, body)
      if (answer._tag === "Answered") return answer.value
      const { error, message, revokedAt, subject } = answer.refusal
      switch (error) {
        case "KeyNotFound":
          return yield* new KeyNotFound({ ref: subject, revokedAt })
        case "KeyNameInUse":
          return yield* new KeyNameInUse({ name: subject })
        default:
          return yield* new StoreUnavailable({ message })
      }
    })

  const encode = <A, I>(schema: Schema.Codec<A, I>, value: A) => Schema.encodeSync(schema)(value)

  return ApiKeyAdmin.of({
    create: Effect.fn("ApiKeyAdmin.create")((request: KeyRequest) =>
      call("POST", ADMIN_PATHS.keys, IssuedJson, encode(CreateJson, {
        name: request.name,
        scope: request.scope,
        lifetimeMillis: request.lifetime === undefined ? null : Duration.toMillis(request.lifetime)
      })).pipe(
        Effect.catchTag("KeyNotFound", Effect.die),
        Effect.map((issued) => ({ key: Redacted.make(issued.key), record: fromJson(issued.record) }))
      )
    ),
    list: call("GET", ADMIN_PATHS.keys, KeysJson).pipe(
      Effect.catchTags({ KeyNotFound: Effect.die, KeyNameInUse: Effect.die }),
      Effect.map(({ keys }) => keys.map(fromJson)),
      Effect.withSpan("ApiKeyAdmin.list")
    ),
    revoke: Effect.fn("ApiKeyAdmin.revoke")((ref: string) =>
      call("POST", ADMIN_PATHS.revoke, KeysJson, encode(RevokeJson, { ref })).pipe(
        Effect.catchTag("KeyNameInUse", Effect.die),
        Effect.map(({ keys }) => keys.map(fromJson))
      )
    ),
    rotate: Effect.fn("ApiKeyAdmin.rotate")((name: KeyName, grace: Duration.Duration) =>
      call("POST", ADMIN_PATHS.rotate, RotatedJson, encode(RotateJson, { name, graceMillis: Duration.toMillis(grace) })).pipe(
        Effect.catchTag("KeyNameInUse", Effect.die),
        Effect.map(({ issued, previous }) => ({
          issued: { key: Redacted.make(issued.key), record: fromJson(issued.record) },
          previous: previous.map(fromJson)
        }))
      )
    )
  })
}

/** ApiKeyAdmin through the admin routes at `address`. */
export const layer = (address: AdminAddress): Layer.Layer<ApiKeyAdmin> => Layer.succeed(ApiKeyAdmin, make(address))
