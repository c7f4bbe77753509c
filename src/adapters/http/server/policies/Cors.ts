/**
 * Cross-origin access for browser clients, off unless origins are configured. Effect's
 * CORS middleware answers the preflight `OPTIONS` itself and adds the headers to every
 * response, errors included (a browser hides a 401 body without them); this module fixes
 * what this API needs: its methods, the request headers a client sends, and the response
 * headers a client must be able to read.
 */
import { HttpMiddleware } from "effect/http"

/** `*` for any origin, or the exact origins (`https://app.example.com`) allowed. */
export type CorsOrigins = "*" | ReadonlyArray<string>

/** Request headers a browser client may send. */
export const ALLOWED_HEADERS = ["Authorization", "Content-Type", "Idempotency-Key", "If-Match", "X-Request-Id"] as const

/** Response headers a browser client may read besides the CORS-safelisted ones. */
export const EXPOSED_HEADERS = [
  "ETag",
  "Link",
  "Location",
  "Deprecation",
  "Sunset",
  "X-Request-Id",
  "Retry-After",
  "RateLimit",
  "RateLimit-Policy"
] as const

/** How long a browser may reuse a preflight answer: 10 minutes (Chromium caps it at 2 hours). */
export const MAX_AGE_SECONDS = 600

/** The middleware for `origins`; its header values are computed once, here. */
export const middleware = (origins: CorsOrigins) =>
  HttpMiddleware.cors({
    // Effect's cors: an empty list means `*`.
    allowedOrigins: origins === "*" ? [] : origins,
    allowedMethods: ["GET", "POST", "PATCH", "DELETE"],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: MAX_AGE_SECONDS
  })
