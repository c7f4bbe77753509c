import { Schema } from "effect"

/** Smallest value of a PostgreSQL `bigint` / OpenAPI `int64`. */
export const INT64_MIN = -(2n ** 63n)
/** Largest value of a PostgreSQL `bigint` / OpenAPI `int64`. */
export const INT64_MAX = 2n ** 63n - 1n

/**
 * A signed 64-bit integer, held as a `bigint` so that every value in
 * [-2^63, 2^63-1] is exact (a JavaScript number is exact only up to 2^53).
 */
export const Int64 = Schema.BigInt.annotate({ expected: "an integer" }).check(
  Schema.isBetweenBigInt(
    { minimum: INT64_MIN, maximum: INT64_MAX },
    { message: "must be an integer between -9223372036854775808 and 9223372036854775807" }
  )
)
