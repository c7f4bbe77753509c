import { Schema } from "effect"

/** What an API key may do: `read` lists and gets; `write` may also change the store. */
export const KeyScope = Schema.Literals(["read", "write"]).annotate({
  identifier: "KeyScope",
  message: `must be one of "read", "write"`
})
/** A value of {@link KeyScope}. */
export type KeyScope = typeof KeyScope.Type

/** What an operation does to the store: `read` lists and gets, `write` changes it. */
export type Access = "read" | "write"

/** Whether a key of `scope` may perform an operation of `access`. */
export const allows = (scope: KeyScope, access: Access): boolean => access === "read" || scope === "write"
