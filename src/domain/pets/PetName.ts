import { Schema } from "effect"

/** Longest accepted name, counted in Unicode code points (not UTF-16 units). */
export const PET_NAME_MAX_CODE_POINTS = 255

// PostgreSQL text cannot hold NUL, and control characters are never a legitimate part of a name.
const C0_CONTROL = /[\u0000-\u001f]/u

/**
 * The characters that count as blank: ECMAScript's white space and line terminators
 * (what `\s` matches), listed so that every store applies the same set. Databases
 * disagree on `[[:space:]]` (PGlite counts U+0085 NEL, a PostgreSQL server in the C.UTF-8
 * locale does not), so the SQL CHECK spells out this class instead. Written in the
 * regular-expression escape syntax that JavaScript and PostgreSQL share.
 */
export const BLANK_CHARACTER_CLASS =
  "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
const NOT_BLANK = new RegExp(`[^${BLANK_CHARACTER_CLASS}]`, "u")

// C0 controls and (lone) surrogates; in a `u` regular expression a surrogate pair is one
// astral code point, so only lone surrogates fall in U+D800 to U+DFFF.
const NEVER = "\\u0000-\\u001f\\ud800-\\udfff"

/**
 * Every rule of {@link PetName} but the length, as one ECMAScript (`u`) regular expression
 * for documents such as OpenAPI: no C0 control, no lone surrogate, at least one character
 * that is not blank. A test checks that it accepts exactly what the checks accept.
 */
export const PET_NAME_PATTERN = `^[^${NEVER}]*[^${NEVER}${BLANK_CHARACTER_CLASS}][^${NEVER}]*$`

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
  Schema.makeFilter((s: string) => NOT_BLANK.test(s), {
    message: "must contain at least one non-whitespace character",
    toJsonSchema: () => ({ pattern: PET_NAME_PATTERN })
  }, true),
  // JSON Schema counts a string's length in code points, as this rule does.
  Schema.makeFilter((s: string) => countCodePoints(s) <= PET_NAME_MAX_CODE_POINTS, {
    message: `must be at most ${PET_NAME_MAX_CODE_POINTS} characters`,
    toJsonSchema: () => ({ maxLength: PET_NAME_MAX_CODE_POINTS })
  }, true)
).pipe(Schema.brand("PetName"))
/** A value of {@link PetName}. */
export type PetName = typeof PetName.Type
