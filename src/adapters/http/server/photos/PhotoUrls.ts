/**
 * Signed photo URLs: an `<img>` cannot send a bearer key, so each rendition URL in a
 * photo record carries `expires` (seconds since the epoch) and `signature`, an HMAC-SHA256
 * over the path and the expiry, which the service checks instead of a key.
 *
 * The HMAC key is derived from a secret. PHOTO_URL_SECRETS lists the operator's, comma
 * separated: the first signs, every one verifies, so a rotation puts the new one first
 * and drops the old one once the URLs it signed have expired (PHOTO_URL_TTL). With none
 * set, the store's own (PhotoRepository.urlSecret), made once and shared by every
 * instance on the store, so instances behind one balancer accept each other's URLs.
 */
import { Context, Duration, Effect, Layer, Redacted } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import type { StoreUnavailable } from "../../../../domain/Errors.ts"
import { PhotoRepository } from "../../../../ports/photos/PhotoRepository.ts"
import { EXPIRES_PARAM, SIGNATURE_PARAM } from "../../api/PhotoUrlAuthorization.ts"

/** How URLs are signed. */
export interface Options {
  /** How long a URL stays valid, at least (expiries are rounded up to the minute, so that URLs repeat and are cached). */
  readonly ttl: Duration.Duration
  /** The operator's secrets, the signing one first; empty: the store's own. */
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
}

/** An hour, and the store's own secret. */
export const DEFAULTS: Options = { ttl: Duration.hours(1), secrets: [] }

// Each secret is used only through a key derived for this one purpose.
const deriveKey = (secret: string): Buffer => createHmac("sha256", secret).update("animal-store photo URLs v1").digest()

const signatureOf = (key: Buffer, path: string, expires: number): Buffer =>
  createHmac("sha256", key).update(`${expires}\n${path}`).digest()

const EXPIRES = /^[1-9]\d{0,11}$/
const MINUTE = 60_000

export class PhotoUrls extends Context.Service<PhotoUrls, {
  /** `path` with the query that lets it be read without a key until some time after `nowMillis + ttl`. */
  readonly sign: (path: string, nowMillis: number) => string
  /**
   * Whether `signature` is a signature this service made of `path` and `expires`, with any
   * of its secrets, that has not expired at `nowMillis` (nor expires later than any URL
   * it signs now could: one signed under a longer TTL).
   */
  readonly verify: (path: string, expires: string | undefined, signature: string, nowMillis: number) => boolean
}>()("animal-store/http/PhotoUrls") {
  /** Signing with `options`' secrets, or else the store's. */
  static layer(options: Options): Layer.Layer<PhotoUrls, StoreUnavailable, PhotoRepository> {
    return Layer.effect(PhotoUrls, Effect.gen(function*() {
      const secrets = options.secrets.length > 0
        ? options.secrets.map(Redacted.value)
        : [yield* Effect.flatMap(PhotoRepository, (photos) => photos.urlSecret)]
      const keys = secrets.map(deriveKey)
      const ttl = Duration.toMillis(options.ttl)
      return PhotoUrls.of({
        sign: (path, nowMillis) => {
          const expires = Math.ceil((nowMillis + ttl) / MINUTE) * (MINUTE / 1000)
          const signature = signatureOf(keys[0]!, path, expires).toString("base64url")
          return `${path}?${EXPIRES_PARAM}=${expires}&${SIGNATURE_PARAM}=${signature}`
        },
        verify: (path, expires, signature, nowMillis) => {
          if (expires === undefined || !EXPIRES.test(expires)) return false
          const at = Number(expires) * 1000
          if (at <= nowMillis || at > nowMillis + ttl + MINUTE) return false
          const given = Buffer.from(signature, "base64url")
          return keys.some((key) => {
            const expected = signatureOf(key, path, Number(expires))
            return given.length === expected.length && timingSafeEqual(given, expected)
          })
        }
      })
    }))
  }
}
