/** RateLimits adapters: token buckets on effect's RateLimiter (memory or Redis store). */
export * as RateLimitsTokenBucket from "./RateLimitsTokenBucket.ts"
