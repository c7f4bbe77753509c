import { Schema } from "effect"

/** What an API key may do: `read` lists and gets; `write` may also change the store. */
export const KeyScope = Schema.Literals(["read", "write"]).annotate({
  identifier: "KeyScope",
  message: `must be one of "read", "write"`
})
/** A value of {@link KeyScope}. */
export type KeyScope = typeof KeyScope.Type
