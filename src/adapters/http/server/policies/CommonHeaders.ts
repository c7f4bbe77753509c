/**
 * Headers on every response the service writes, from the application or from the HTTP
 * server itself: never sniffed into another type than the declared one, and never stored
 * by a cache (API answers are per client and change). Static assets (StaticAsset) set
 * their own, cacheable, policy.
 */

export const X_CONTENT_TYPE_OPTIONS = "nosniff"
export const CACHE_CONTROL = "no-store"
