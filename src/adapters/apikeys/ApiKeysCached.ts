import { timingSafeEqual } from "node:crypto"
import { Clock, DateTime, Duration, Effect, Fiber, Layer, Option, Redacted, Schedule, Semaphore, Stream } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { ApiKey } from "../../domain/keys/ApiKey.ts"
import { Caller } from "../../domain/keys/Caller.ts"
import { parseKeyId } from "../../domain/keys/KeyFormat.ts"
import type { KeyId } from "../../domain/keys/KeyId.ts"
import { ApiKeys } from "../../ports/keys/ApiKeys.ts"
import { ApiKeyStore } from "../../ports/keys/ApiKeyStore.ts"
import * as ReleaseDeadline from "../process/ReleaseDeadline.ts"
import { matchStatic, type StaticKey, staticKeys } from "./ApiKeysStatic.ts"
import { digestOf } from "../../application/keys/KeyIssuer.ts"
import * as Spans from "../observability/Spans.ts"

/** How often the whole key list is read again, whatever the change feed said: the safety net. */
export const RELOAD_INTERVAL = Duration.seconds(30)
/** A key's last use is written at most this often. */
export const TOUCH_INTERVAL = Duration.minutes(1)

interface Entry {
  readonly id: KeyId
  readonly digest: Buffer
  readonly caller: Caller
  /** Infinity when the key does not expire. */
  readonly expiresAtMillis: number
  lastUsedMillis: number
}

// Compared against when the presented key names no known id, so that path does the same work.
const NO_DIGEST = Buffer.alloc(32)

const entryOf = (key: ApiKey): Entry => ({
  id: key.id,
  digest: Buffer.from(key.digest, "hex"),
  caller: new Caller({ keyId: key.id, scope: key.scope }),
  expiresAtMillis: key.expiresAt === undefined ? Infinity : DateTime.toEpochMillis(key.expiresAt),
  lastUsedMillis: key.lastUsedAt === undefined ? -Infinity : DateTime.toEpochMillis(key.lastUsedAt)
})

/**
 * Verifies keys against a copy of the store's keys held in memory, so that a request
 * never waits for the database: a lookup by the key's public id, then one
 * constant-time comparison of SHA-256 digests. Keys from `fixed` (API_KEYS) are
 * accepted too, as `write` callers that no store change can revoke.
 *
 * The copy is read again whenever the store reports a change (this process's writes at
 * once; other instances' through the store's feed) and every {@link RELOAD_INTERVAL}.
 * Expiry is checked against the Clock at each verification. Last uses are gathered in
 * memory and written at most once per {@link TOUCH_INTERVAL} per key, and at shutdown
 * (within ReleaseDeadline.TIMEOUT).
 */
export const make = (fixed: ReadonlyArray<Redacted.Redacted<string>>) =>
  Effect.gen(function*() {
    const store = yield* ApiKeyStore
    // Derived while the key list loads and the service goes on starting; a verification
    // that comes first waits for it.
    const deriving = yield* Effect.forkScoped(staticKeys(fixed))
    let accepted: ReadonlyArray<StaticKey> | undefined
    let entries = new Map<KeyId, Entry>()
    const used = new Map<KeyId, number>()

    const load = Effect.map(store.list, (keys) => {
      const next = new Map<KeyId, Entry>()
      for (const key of keys) {
        if (key.revokedAt !== undefined) continue
        const entry = entryOf(key)
        // A use seen here but not yet written must not be forgotten by a reload.
        entry.lastUsedMillis = Math.max(entry.lastUsedMillis, entries.get(key.id)?.lastUsedMillis ?? -Infinity)
        next.set(key.id, entry)
      }
      entries = next
    })
    // One reload at a time, so an older read never replaces a newer one.
    const reload = Semaphore.withPermits(yield* Semaphore.make(1), 1)(load).pipe(
      Effect.catchTag("StoreUnavailable", (error) => Effect.logWarning(`API keys not reloaded: ${error.message}`))
    )
    // Subscribed before the first load, so no change falls between the two.
    const changes = yield* store.changes
    yield* load

    // Background reloads record no trace: one every 30 s per instance, nearly always of nothing new.
    yield* Effect.forkScoped(Effect.withTracerEnabled(Stream.runForEach(changes, () => reload), false))
    yield* Effect.forkScoped(Effect.withTracerEnabled(Effect.repeat(Effect.delay(reload, RELOAD_INTERVAL), Schedule.forever), false))

    const flush = Effect.suspend(() => {
      if (used.size === 0) return Effect.void
      const uses = [...used].map(([id, millis]) => [id, DateTime.makeUnsafe(millis)] as const)
      used.clear()
      return store.touch(uses)
    }).pipe(Effect.catchTag("StoreUnavailable", (error: StoreUnavailable) =>
      Effect.logWarning(`API key last uses not recorded: ${error.message}`)
    ))
    yield* Effect.forkScoped(Effect.withTracerEnabled(Effect.repeat(Effect.delay(flush, TOUCH_INTERVAL), Schedule.forever), false))
    yield* Effect.addFinalizer(() => ReleaseDeadline.bound("the API keys' last-use flush")(flush))

    const touchInterval = Duration.toMillis(TOUCH_INTERVAL)
    const check = (fixedKeys: ReadonlyArray<StaticKey>, key: string, now: number): Option.Option<Caller> => {
      const presented = digestOf(key)
      const fixedCaller = matchStatic(fixedKeys, presented)
      const id = parseKeyId(key)
      const entry = Option.isSome(id) ? entries.get(id.value) : undefined
      const matches = timingSafeEqual(entry?.digest ?? NO_DIGEST, presented)
      if (entry !== undefined && matches && now < entry.expiresAtMillis) {
        if (now - entry.lastUsedMillis >= touchInterval) {
          entry.lastUsedMillis = now
          used.set(entry.id, now)
        }
        return Option.some(entry.caller)
      }
      return Option.fromUndefinedOr(fixedCaller)
    }

    // One step of the runtime per verification: the clock read from the fiber, the answer its value.
    const verifyWith = (fixedKeys: ReadonlyArray<StaticKey>, key: Redacted.Redacted<string>) =>
      Effect.withFiberSucceed((fiber) =>
        check(fixedKeys, Redacted.value(key), fiber.getRef(Clock.Clock).currentTimeMillisUnsafe())
      )

    return ApiKeys.of({
      verify: Spans.method("ApiKeys.verify", (key: Redacted.Redacted<string>) =>
        accepted !== undefined
          ? verifyWith(accepted, key)
          : Effect.flatMap(Fiber.join(deriving), (derived) => {
            accepted = derived
            return verifyWith(derived, key)
          })
      ),
      // A revoked key has left the copy (at the next reload); an expired one is judged by the Clock.
      stillAccepts: (caller) =>
        Effect.withFiberSucceed((fiber) => {
          const entry = entries.get(caller.keyId as KeyId)
          if (entry !== undefined) return fiber.getRef(Clock.Clock).currentTimeMillisUnsafe() < entry.expiresAtMillis
          return accepted?.some((key) => key.caller.keyId === caller.keyId) ?? false
        })
    })
  })

/** ApiKeys over the ApiKeyStore in context, plus the fixed `keys`. */
export const layer = (
  keys: ReadonlyArray<Redacted.Redacted<string>>
): Layer.Layer<ApiKeys, StoreUnavailable, ApiKeyStore> => Layer.effect(ApiKeys, make(keys))
