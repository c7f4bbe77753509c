import { Context, type Effect, type Option, type Redacted } from "effect"
import type { Caller } from "../../domain/keys/Caller.ts"

/** Decides whether a presented API key is one the service accepts, and whose it is. */
export class ApiKeys extends Context.Service<ApiKeys, {
  /**
   * The caller `key` identifies, or none when it is not accepted. Implementations must
   * not leak timing about near matches.
   */
  readonly verify: (key: Redacted.Redacted<string>) => Effect.Effect<Option.Option<Caller>>
  /**
   * Whether the key `caller` was verified with is still accepted: not revoked nor
   * expired since. A long-lived answer (an event stream) asks as it goes on.
   */
  readonly stillAccepts: (caller: Caller) => Effect.Effect<boolean>
}>()("animal-store/ports/ApiKeys") {}
