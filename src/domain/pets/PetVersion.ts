import { Schema } from "effect"

/**
 * How many times a pet has changed: 1 when created, one more with every change (a patch,
 * an empty one too; the status an order's place, delivery or cancellation sets; the
 * delete). An approval, which leaves the pet pending, is not a change of it. The HTTP
 * layer shows it as the ETag.
 */
export const PetVersion = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).pipe(Schema.brand("PetVersion"))
/** A value of {@link PetVersion}. */
export type PetVersion = typeof PetVersion.Type

/** The version of a new pet. */
export const FIRST_VERSION: PetVersion = PetVersion.make(1)

/** The version after one more change. */
export const nextVersion = (version: PetVersion): PetVersion => PetVersion.make(version + 1)
