import { DateTime, Duration } from "effect"

/** Delay before the first retry's window: the backoff's base. */
export const RETRY_BASE = Duration.seconds(5)
/** Longest window a retry is drawn from. */
export const RETRY_CAP = Duration.hours(1)
/** How long after its first attempt an event is still retried: then it is given up. */
export const RETRY_WINDOW = Duration.hours(24)

/**
 * When to try a delivery again after its `attempt`-th attempt (1 for the first) failed
 * at `failedAt`, or undefined when the event is given up. Exponential backoff with full
 * jitter: the n-th retry waits `random × min(RETRY_CAP, RETRY_BASE × 2^(n-1))`, so
 * 0–5 s, 0–10 s, 0–20 s... up to 0–1 h from the 11th retry on (about 30 min on
 * average), and no retry is scheduled later than RETRY_WINDOW (24 h) after
 * `firstAttemptAt`. Full jitter spreads the retries of many subscriptions that failed
 * together (a receiver's outage) instead of sending them back in one wave.
 *
 * `random` is a number in [0, 1): pure, so the caller draws it (Math.random, or fixed in a test).
 */
export const nextAttemptAt = (schedule: {
  readonly attempt: number
  readonly firstAttemptAt: DateTime.Utc
  readonly failedAt: DateTime.Utc
  readonly random: number
}): DateTime.Utc | undefined => {
  const base = Duration.toMillis(RETRY_BASE)
  const window = Math.min(Duration.toMillis(RETRY_CAP), base * 2 ** Math.min(schedule.attempt - 1, 30))
  const next = DateTime.add(schedule.failedAt, { milliseconds: Math.floor(schedule.random * window) })
  const deadline = DateTime.addDuration(schedule.firstAttemptAt, RETRY_WINDOW)
  return DateTime.isGreaterThan(next, deadline) ? undefined : next
}
