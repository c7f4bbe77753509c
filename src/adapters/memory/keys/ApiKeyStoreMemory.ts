import { DateTime, Effect, Layer, PubSub, Stream } from "effect"
import { ApiKey } from "../../../domain/keys/ApiKey.ts"
import type { KeyId } from "../../../domain/keys/KeyId.ts"
import { ApiKeyStore } from "../../../ports/keys/ApiKeyStore.ts"
import * as Spans from "../../observability/Spans.ts"

/**
 * Managed keys in process memory: nothing survives a restart, and only this process
 * sees them. Each method body runs synchronously inside one Effect step.
 */
export const make = Effect.gen(function*() {
  const keys = new Map<KeyId, ApiKey>()
  // Sliding, size 1: a subscriber only needs to know that something changed since it last looked.
  const changed = yield* PubSub.sliding<void>(1)
  const signal = PubSub.publish(changed, undefined)
  const update = (id: KeyId, fields: Partial<ApiKey>) => {
    const key = keys.get(id)
    if (key !== undefined) keys.set(id, new ApiKey({ ...key, ...fields }, { disableChecks: true }))
  }

  return ApiKeyStore.of({
    insert: Spans.method("ApiKeyStore.insert", (key: ApiKey) =>
      Effect.andThen(Effect.sync(() => keys.set(key.id, key)), signal)
    ),
    insertIfEmpty: Spans.method("ApiKeyStore.insertIfEmpty", (key: ApiKey) =>
      Effect.suspend(() => {
        if (keys.size > 0) return Effect.succeed(false)
        keys.set(key.id, key)
        return Effect.as(signal, true)
      })
    ),
    list: Effect.sync(() => [...keys.values()]).pipe(Spans.span("ApiKeyStore.list")),
    revoke: Spans.method("ApiKeyStore.revoke", (ids: ReadonlyArray<KeyId>, at: DateTime.Utc) =>
      Effect.andThen(
        Effect.sync(() => {
          for (const id of ids) if (keys.get(id)?.revokedAt === undefined) update(id, { revokedAt: at })
        }),
        signal
      )
    ),
    expire: Spans.method("ApiKeyStore.expire", (expiries: ReadonlyArray<readonly [KeyId, DateTime.Utc]>) =>
      Effect.andThen(Effect.sync(() => expiries.forEach(([id, at]) => update(id, { expiresAt: at }))), signal)
    ),
    rotate: Spans.method("ApiKeyStore.rotate", (successor: ApiKey, expiries: ReadonlyArray<readonly [KeyId, DateTime.Utc]>) =>
      Effect.suspend(() => {
        // Checked before anything changes, so that a refused rotation changes nothing.
        if (keys.has(successor.id)) return Effect.die(new Error(`API key id ${successor.id} is taken`))
        expiries.forEach(([id, at]) => update(id, { expiresAt: at }))
        keys.set(successor.id, successor)
        return signal
      })
    ),
    touch: Spans.method("ApiKeyStore.touch", (uses: ReadonlyArray<readonly [KeyId, DateTime.Utc]>) =>
      Effect.sync(() => {
        for (const [id, at] of uses) {
          const last = keys.get(id)?.lastUsedAt
          if (last === undefined || DateTime.isLessThan(last, at)) update(id, { lastUsedAt: at })
        }
      })
    ),
    changes: Effect.map(PubSub.subscribe(changed), Stream.fromSubscription)
  })
})

/** An ApiKeyStore of its own, in memory. */
export const layer: Layer.Layer<ApiKeyStore> = Layer.effect(ApiKeyStore, make)
