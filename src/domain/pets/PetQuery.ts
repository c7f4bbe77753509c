import type { PetId } from "./PetId.ts"
import type { SearchText } from "./PetSearch.ts"
import type { PetStatus } from "./PetStatus.ts"
import type { PetTag } from "./PetTag.ts"

/**
 * A keyset page request: up to `limit` pets with an id greater than `after`,
 * in ascending id order, optionally only those with `status`, carrying every one of
 * `tags`, and whose name contains `q` (compared through searchKey: case and accents
 * aside).
 */
export interface PetQuery {
  readonly limit: number
  readonly status?: PetStatus | undefined
  readonly after?: PetId | undefined
  readonly tags?: ReadonlyArray<PetTag> | undefined
  readonly q?: SearchText | undefined
}

/** A page of the tags in use: up to `limit` tags after `after`, in ascending (code point) order. */
export interface TagQuery {
  readonly limit: number
  readonly after?: string | undefined
}

/** A tag in use and how many pets (not retired) carry it. */
export interface TagCount {
  readonly tag: string
  readonly pets: number
}
