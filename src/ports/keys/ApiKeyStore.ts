import { Context, type DateTime, type Effect, type Scope, type Stream } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { ApiKey } from "../../domain/keys/ApiKey.ts"
import type { KeyId } from "../../domain/keys/KeyId.ts"

/**
 * Where managed API keys are kept: their records, with digests instead of keys. Key
 * checks do not read it per request; they read a copy in memory, refreshed on
 * {@link ApiKeyStore.changes} (see ApiKeysCached).
 */
export class ApiKeyStore extends Context.Service<ApiKeyStore, {
  /** Adds a key record (ids are unique; a duplicate id is a defect). */
  readonly insert: (key: ApiKey) => Effect.Effect<void, StoreUnavailable>
  /** Adds `key` only when the store holds no key at all, atomically; true when it did. */
  readonly insertIfEmpty: (key: ApiKey) => Effect.Effect<boolean, StoreUnavailable>
  /** Every key, revoked and expired ones included, oldest first. */
  readonly list: Effect.Effect<ReadonlyArray<ApiKey>, StoreUnavailable>
  /** Marks the keys revoked at `at` (those already revoked keep their time). */
  readonly revoke: (ids: ReadonlyArray<KeyId>, at: DateTime.Utc) => Effect.Effect<void, StoreUnavailable>
  /** Sets each key's expiry to the given instant. */
  readonly expire: (expiries: ReadonlyArray<readonly [KeyId, DateTime.Utc]>) => Effect.Effect<void, StoreUnavailable>
  /**
   * Sets each key's expiry and adds `successor`, as one change: both or neither, so a
   * rotation never cuts the old keys' lives without its new key, nor issues one beside
   * keys that keep living. A duplicate id is a defect, and then nothing changes.
   */
  readonly rotate: (
    successor: ApiKey,
    expiries: ReadonlyArray<readonly [KeyId, DateTime.Utc]>
  ) => Effect.Effect<void, StoreUnavailable>
  /** Records last uses; an earlier time never replaces a later one. Not a change. */
  readonly touch: (uses: ReadonlyArray<readonly [KeyId, DateTime.Utc]>) => Effect.Effect<void, StoreUnavailable>
  /**
   * Subscribes to key changes: once this effect completes, the stream has one element
   * each time keys may have changed (inserted, revoked, expiry moved), by this process
   * or, where the store can tell, by another one on the same database. The stream never
   * fails: an adapter that loses its feed reconnects by itself.
   */
  readonly changes: Effect.Effect<Stream.Stream<void>, never, Scope.Scope>
}>()("animal-store/ports/ApiKeyStore") {}
