import type { PetId } from "./PetId.ts"
import type { PetStatus } from "./PetStatus.ts"

/** Fewest pets a page may ask for. */
export const PAGE_LIMIT_MIN = 1
/** Most pets a page may ask for. */
export const PAGE_LIMIT_MAX = 100
/** Page size when the client names none. */
export const PAGE_LIMIT_DEFAULT = 20

/**
 * A keyset page request: up to `limit` pets with an id greater than `after`,
 * in ascending id order, optionally only those with `status`.
 */
export interface PetQuery {
  readonly limit: number
  readonly status?: PetStatus | undefined
  readonly after?: PetId | undefined
}
