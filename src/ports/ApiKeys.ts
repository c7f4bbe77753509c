import { Context, type Effect, type Redacted } from "effect"

/** Decides whether a presented API key is one the service accepts. */
export class ApiKeys extends Context.Service<ApiKeys, {
  /** True when `key` is accepted. Implementations must not leak timing about near matches. */
  readonly verify: (key: Redacted.Redacted<string>) => Effect.Effect<boolean>
}>()("animal-store/ports/ApiKeys") {}
