import { Schema } from "effect"
import { Int64 } from "../Int64.ts"

/** Identifier of the category a pet belongs to; categories themselves are not modelled. */
export const CategoryId = Int64.pipe(Schema.brand("CategoryId"))
/** A value of {@link CategoryId}. */
export type CategoryId = typeof CategoryId.Type
