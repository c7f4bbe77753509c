import { Schema } from "effect"

/** A key's label, chosen by the operator: 1–100 characters, no control characters. */
export const KeyName = Schema.String.check(
  Schema.isPattern(/^[^\u0000-\u001f\u007f]{1,100}$/u, {
    message: "must be 1 to 100 characters without control characters"
  }),
  Schema.makeFilter((name: string) => name.trim() === name && name !== "", {
    message: "must not be blank or start or end with white space"
  })
).pipe(Schema.brand("KeyName"))
/** A value of {@link KeyName}. */
export type KeyName = typeof KeyName.Type
