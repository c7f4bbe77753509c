import { Schema } from "effect"

/** Shortest and longest search text, in Unicode code points. */
export const SEARCH_TEXT_MIN_CODE_POINTS = 2
export const SEARCH_TEXT_MAX_CODE_POINTS = 64

const COMBINING_MARK = /\p{M}/gu

/**
 * The one normalization every store searches names with, applied to the name and to
 * the search text alike: compatibility decomposition (NFKD: `ｚ` is `z`, `ﬁ` is `fi`),
 * without combining marks (accents: `ë` is `e`), lowercase, recomposed (NFC). Marks are
 * dropped before lowercasing so that `İ` becomes `i`, not `i` and a dot. So `zoe`
 * finds "Zoë" and "ZOË". Scripts whose vowels are marks lose them on both sides alike.
 */
export const searchKey = (text: string): string =>
  text.normalize("NFKD").replace(COMBINING_MARK, "").toLowerCase().normalize("NFC")

const codePoints = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * What a caller searches pet names for (`q`): 2 to 64 characters (code points), no
 * control character or lone surrogate (PostgreSQL text cannot hold NUL), and something
 * left once accents are set aside (a text of combining marks alone would match every
 * name). Matched as a substring of each name, through {@link searchKey}.
 */
export const SearchText = Schema.String.annotate({ expected: "a string" }).check(
  Schema.makeFilter((s: string) => s.isWellFormed(), { message: "must not contain lone surrogates" }, true),
  Schema.makeFilter((s: string) => !/[\u0000-\u001f]/u.test(s), {
    message: "must not contain NUL or other control characters (U+0000 to U+001F)",
    // For documents such as OpenAPI: no C0 control and no lone surrogate (in a `u`
    // expression a surrogate pair is one astral code point).
    toJsonSchema: () => ({ pattern: "^[^\\u0000-\\u001f\\ud800-\\udfff]*$" })
  }, true),
  Schema.makeFilter((s: string) => {
    const n = codePoints(s)
    return n >= SEARCH_TEXT_MIN_CODE_POINTS && n <= SEARCH_TEXT_MAX_CODE_POINTS
  }, {
    message: `must be ${SEARCH_TEXT_MIN_CODE_POINTS} to ${SEARCH_TEXT_MAX_CODE_POINTS} characters`,
    toJsonSchema: () => ({ minLength: SEARCH_TEXT_MIN_CODE_POINTS, maxLength: SEARCH_TEXT_MAX_CODE_POINTS })
  }, true),
  Schema.makeFilter((s: string) => searchKey(s) !== "", { message: "must contain a character that is not an accent mark" }, true)
).pipe(Schema.brand("SearchText"))
/** A value of {@link SearchText}. */
export type SearchText = typeof SearchText.Type
