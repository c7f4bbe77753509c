/** Fewest items a keyset page (of pets or of orders) may ask for. */
export const PAGE_LIMIT_MIN = 1
/** Most items a keyset page may ask for. */
export const PAGE_LIMIT_MAX = 100
/** Page size when the client names none. */
export const PAGE_LIMIT_DEFAULT = 20
