import { Context, type Duration, type Effect, type Redacted } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.ts"
import type { ApiKey } from "../../domain/keys/ApiKey.ts"
import type { KeyNameInUse, KeyNotFound } from "../../domain/keys/KeyErrors.ts"
import type { KeyName } from "../../domain/keys/KeyName.ts"
import type { KeyScope } from "../../domain/keys/KeyScope.ts"

/** A key just issued: the key itself, shown this once, and its record. */
export interface IssuedKey {
  readonly key: Redacted.Redacted<string>
  readonly record: ApiKey
}

/** What issuing a key asks for. */
export interface KeyRequest {
  readonly name: KeyName
  readonly scope: KeyScope
  /** How long the key lives; none: until revoked. */
  readonly lifetime: Duration.Duration | undefined
}

/** Managing API keys: what the `animal-store keys` command does, on whichever store. */
export class ApiKeyAdmin extends Context.Service<ApiKeyAdmin, {
  /** Issues a key. A live key with the same name is refused. */
  readonly create: (request: KeyRequest) => Effect.Effect<IssuedKey, KeyNameInUse | StoreUnavailable>
  /** Every key (never a key's text: there is none to show). */
  readonly list: Effect.Effect<ReadonlyArray<ApiKey>, StoreUnavailable>
  /** Revokes the key with id `ref`, or else every live key named `ref`; returns those revoked. */
  readonly revoke: (ref: string) => Effect.Effect<ReadonlyArray<ApiKey>, KeyNotFound | StoreUnavailable>
  /**
   * Issues a new key with the name and scope of the live keys named `name`; those keep
   * working for `grace` (never past their own expiry). Returns the new key and the old ones.
   */
  readonly rotate: (
    name: KeyName,
    grace: Duration.Duration
  ) => Effect.Effect<{ readonly issued: IssuedKey; readonly previous: ReadonlyArray<ApiKey> }, KeyNotFound | StoreUnavailable>
}>()("animal-store/ports/ApiKeyAdmin") {}
