import { Schema } from "effect"
import { Int64 } from "../Int64.ts"

/** The id of a pet's photo: a positive int64 assigned by the store. */
export const PhotoId = Int64.check(Schema.isGreaterThanBigInt(0n, { message: "must be a positive integer" }))
  .pipe(Schema.brand("PhotoId"))
/** A value of {@link PhotoId}. */
export type PhotoId = typeof PhotoId.Type
