import { DateTime, Duration } from "effect"
import type { ApiKey } from "./ApiKey.ts"

/** Whether `key` is accepted at `now`: not revoked, and not past its expiry. */
export const isUsable = (key: ApiKey, now: DateTime.Utc): boolean =>
  key.revokedAt === undefined && (key.expiresAt === undefined || DateTime.isLessThan(now, key.expiresAt))

/** The expiry of a key issued at `now` to live `lifetime`; none for a key that does not expire. */
export const expiryOf = (now: DateTime.Utc, lifetime: Duration.Duration | undefined): DateTime.Utc | undefined =>
  lifetime === undefined ? undefined : DateTime.addDuration(now, lifetime)

/**
 * The expiry of a key being rotated out: it keeps working for `grace` from `now`, but
 * never longer than it would have anyway.
 */
export const graceExpiry = (key: ApiKey, now: DateTime.Utc, grace: Duration.Duration): DateTime.Utc => {
  const end = DateTime.addDuration(now, grace)
  return key.expiresAt === undefined ? end : DateTime.min(key.expiresAt, end)
}
