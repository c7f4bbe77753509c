import { Context, type Effect, type Option, type Redacted } from "effect"
import type { Caller } from "../../domain/keys/Caller.ts"

/** Decides whether a presented API key is one the service accepts, and whose it is. */
export class ApiKeys extends Context.Service<ApiKeys, {
  /**
   * The caller `key` identifies, or none when it is not accepted. Implementations must
   * not leak timing about near matches.
   */
  readonly verify: (key: Redacted.Redacted<string>) => Effect.Effect<Option.Option<Caller>>
}>()("animal-store/ports/ApiKeys") {}
