import { Schema } from "effect"

/** Longest accepted name, counted in Unicode code points (not UTF-16 units). */
export const PET_NAME_MAX_CODE_POINTS = 255

// PostgreSQL text cannot hold NUL, and control characters are never a legitimate part of a name.
const C0_CONTROL = /[\u0000-\u001f]/u
const NON_WHITESPACE = /\S/u

const countCodePoints = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * A pet's name, stored and returned exactly as sent (never trimmed).
 * Checks run in order and stop at the first failure, so the message names one rule.
 */
export const PetName = Schema.String.annotate({ expected: "a string" }).check(
  // Implied by the whitespace rule below; stated so that generated names start non-empty.
  Schema.isMinLength(1, { message: "must contain at least one non-whitespace character" }),
  Schema.makeFilter((s: string) => s.isWellFormed(), { message: "must not contain lone surrogates" }, true),
  Schema.makeFilter((s: string) => !C0_CONTROL.test(s), {
    message: "must not contain NUL or other control characters (U+0000 to U+001F)"
  }, true),
  Schema.makeFilter((s: string) => NON_WHITESPACE.test(s), {
    message: "must contain at least one non-whitespace character"
  }, true),
  Schema.makeFilter((s: string) => countCodePoints(s) <= PET_NAME_MAX_CODE_POINTS, {
    message: `must be at most ${PET_NAME_MAX_CODE_POINTS} characters`
  }, true)
).pipe(Schema.brand("PetName"))
/** A value of {@link PetName}. */
export type PetName = typeof PetName.Type
