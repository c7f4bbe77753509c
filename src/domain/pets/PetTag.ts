import { Schema } from "effect"

/** Most tags a pet may carry. */
export const PET_TAGS_MAX = 10

/** A tag's rule as one ECMAScript regular expression, for documents such as OpenAPI and for SQL CHECKs. */
export const PET_TAG_PATTERN = "^[a-z0-9][a-z0-9-]{0,31}$"

/**
 * A label on a pet (`cat`, `young`, `indoor-only`): a lowercase slug of 1 to 32 ASCII
 * letters, digits and hyphens, not starting with a hyphen. Lowercase only, and no
 * folding: `Cat` is refused rather than turned into `cat`, so a tag is stored, filtered
 * and counted exactly as sent.
 */
const SLUG = new RegExp(PET_TAG_PATTERN)

export const PetTag = Schema.String.annotate({ expected: "a string" }).check(
  Schema.makeFilter((s: string) => SLUG.test(s), {
    message: "must be a lowercase slug: 1 to 32 of a-z, 0-9 and '-', not starting with '-'",
    toJsonSchema: () => ({ pattern: PET_TAG_PATTERN })
  })
).pipe(Schema.brand("PetTag"))
/** A value of {@link PetTag}. */
export type PetTag = typeof PetTag.Type

/** A pet's tags: at most {@link PET_TAGS_MAX}, each once, in the order given. */
export const PetTags = Schema.Array(PetTag).check(
  Schema.isMaxLength(PET_TAGS_MAX, { message: `must hold at most ${PET_TAGS_MAX} tags` }),
  Schema.isUnique({ message: "must not hold the same tag twice" })
)
/** A value of {@link PetTags}. */
export type PetTags = typeof PetTags.Type

/** Whether two tag lists are the same, in the same order. */
export const sameTags = (a: ReadonlyArray<PetTag>, b: ReadonlyArray<PetTag>): boolean =>
  a.length === b.length && a.every((tag, i) => tag === b[i])
