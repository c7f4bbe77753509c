import { Schema } from "effect"

/**
 * How many times a pet has been written: 1 when created, one more with every change
 * (a patch, a status set by an order, the delete). The HTTP layer shows it as the ETag.
 */
export const PetVersion = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).pipe(Schema.brand("PetVersion"))
/** A value of {@link PetVersion}. */
export type PetVersion = typeof PetVersion.Type

/** The version of a new pet. */
export const FIRST_VERSION: PetVersion = PetVersion.make(1)

/** The version after one more change. */
export const nextVersion = (version: PetVersion): PetVersion => PetVersion.make(version + 1)
