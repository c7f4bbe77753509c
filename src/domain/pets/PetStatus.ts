import { Schema } from "effect"

/** Availability of a pet. */
export const PetStatus = Schema.Literals(["available", "pending", "sold"]).annotate({
  identifier: "PetStatus",
  message: `must be one of "available", "pending", "sold"`
})
/** A value of {@link PetStatus}. */
export type PetStatus = typeof PetStatus.Type
