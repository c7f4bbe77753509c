import { Schema } from "effect"
import type { PetPrecondition } from "../../../domain/pets/PetChanges.ts"
import { type PetVersion, PetVersion as PetVersionSchema } from "../../../domain/pets/PetVersion.ts"

/** A pet's `ETag` (RFC 9110 section 8.8.3): its version, as a strong entity tag. */
export const etagOf = (version: PetVersion): string => `"${version}"`

/** The request headers of a change to a pet: an optional `If-Match`. */
export const IfMatchHeaders = {
  "if-match": Schema.optionalKey(Schema.String.annotate({
    description: "The pet's `ETag` as last read: the change applies only if the pet is still at that version " +
      "(otherwise 412 `precondition_failed`). Without it the change applies whatever the version."
  }))
}

const isVersion = Schema.is(PetVersionSchema)
const STRONG_TAG = /^"(\d{1,15})"$/

/**
 * The precondition of an `If-Match` value: `*` (any current pet) or a list of entity tags,
 * compared strongly (RFC 9110 section 8.8.3.2: character by character), so a tag matches a
 * version only if it is exactly that version's {@link etagOf}: weak (`W/`) tags, foreign tags
 * and other spellings of the number (`"01"`, `"+1"`, `"1.0"`) never match. A header that
 * names no version of ours is a condition no pet meets.
 */
export const preconditionOf = (ifMatch: string | undefined): PetPrecondition => {
  if (ifMatch === undefined || ifMatch.trim() === "*") return {}
  const versions = ifMatch.split(",").flatMap((field) => {
    const tag = field.trim()
    const digits = STRONG_TAG.exec(tag)?.[1]
    const version = digits === undefined ? Number.NaN : Number(digits)
    return isVersion(version) && etagOf(version) === tag ? [version] : []
  })
  return { ifMatch: versions }
}
