import { Schema } from "effect"
import { Int64 } from "../Int64.ts"

/** Identifier of a pet: an int64 assigned by the store, starting at 1. */
export const PetId = Int64.pipe(Schema.brand("PetId"))
/** A value of {@link PetId}. */
export type PetId = typeof PetId.Type
