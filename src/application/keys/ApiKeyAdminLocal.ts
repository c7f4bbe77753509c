import { DateTime, type Duration, Effect, Layer, Option } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { ApiKey } from "../../domain/keys/ApiKey.ts"
import { KeyNameInUse, KeyNotFound } from "../../domain/keys/KeyErrors.ts"
import { graceExpiry, isUsable } from "../../domain/keys/KeyExpiry.ts"
import { KeyName } from "../../domain/keys/KeyName.ts"
import { ApiKeyAdmin, type IssuedKey, type KeyRequest } from "../../ports/keys/ApiKeyAdmin.ts"
import { ApiKeyStore } from "../../ports/keys/ApiKeyStore.ts"
import { issue } from "./KeyIssuer.ts"

/** Name of the key a durable store issues for itself when it starts with none. */
export const BOOTSTRAP_KEY_NAME = KeyName.make("bootstrap")

/**
 * Issues a `write` key named "bootstrap" when the store holds no key at all (revoked
 * ones count: a store whose keys were all revoked stays locked until a key is created).
 * Concurrent starters on one database issue one key between them.
 */
export const bootstrap: Effect.Effect<Option.Option<IssuedKey>, StoreUnavailable, ApiKeyStore> =
  Effect.gen(function*() {
    const store = yield* ApiKeyStore
    const issued = issue({ name: BOOTSTRAP_KEY_NAME, scope: "write", lifetime: undefined }, yield* DateTime.now)
    return (yield* store.insertIfEmpty(issued.record)) ? Option.some(issued) : Option.none()
  })

/** Key management on the ApiKeyStore in context: the CLI's work, done in this process. */
export const make = Effect.gen(function*() {
  const store = yield* ApiKeyStore
  const live = (keys: ReadonlyArray<ApiKey>, name: string, now: DateTime.Utc) =>
    keys.filter((key) => key.name === name && isUsable(key, now))
  // Nothing live to act on: say whether `ref` names keys that were revoked, and when.
  const notFound = (ref: string, keys: ReadonlyArray<ApiKey>) => {
    const revoked = keys.flatMap((key) =>
      (key.id === ref || key.name === ref) && key.revokedAt !== undefined ? [key.revokedAt] : []
    )
    return new KeyNotFound({ ref, revokedAt: revoked.reduce<DateTime.Utc | undefined>(
      (latest, at) => latest === undefined ? at : DateTime.max(latest, at),
      undefined
    ) })
  }

  const create = Effect.fn("ApiKeyAdmin.create")(function*(request: KeyRequest) {
    const now = yield* DateTime.now
    if (live(yield* store.list, request.name, now).length > 0) return yield* new KeyNameInUse({ name: request.name })
    const issued = issue(request, now)
    yield* store.insert(issued.record)
    return issued
  })

  const revoke = Effect.fn("ApiKeyAdmin.revoke")(function*(ref: string) {
    const now = yield* DateTime.now
    const keys = yield* store.list
    const byId = keys.filter((key) => key.id === ref && key.revokedAt === undefined)
    const targets = byId.length > 0 ? byId : keys.filter((key) => key.name === ref && key.revokedAt === undefined)
    if (targets.length === 0) return yield* notFound(ref, keys)
    const ids = targets.map((key) => key.id)
    yield* store.revoke(ids, now)
    return (yield* store.list).filter((key) => ids.includes(key.id))
  })

  const rotate = Effect.fn("ApiKeyAdmin.rotate")(function*(name: KeyName, grace: Duration.Duration) {
    const now = yield* DateTime.now
    const keys = yield* store.list
    const previous = live(keys, name, now)
    const newest = previous.at(-1)
    if (newest === undefined) return yield* notFound(name, keys)
    const issued = issue({ name, scope: newest.scope, lifetime: undefined }, now)
    yield* store.rotate(issued.record, previous.map((key) => [key.id, graceExpiry(key, now, grace)] as const))
    const ids = previous.map((key) => key.id)
    return { issued, previous: (yield* store.list).filter((key) => ids.includes(key.id)) }
  })

  return ApiKeyAdmin.of({ create, list: store.list.pipe(Effect.withSpan("ApiKeyAdmin.list")), revoke, rotate })
})

/** ApiKeyAdmin over the ApiKeyStore in context. */
export const layer: Layer.Layer<ApiKeyAdmin, never, ApiKeyStore> = Layer.effect(ApiKeyAdmin, make)
