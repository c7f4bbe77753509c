// What replaces getPet: listPets, filtered by status.
const SUCCESSOR_PATH = "/v1/pets"

/**
 * The deprecation of getPet (GET /v1/pets/{petId}). The spec fixes the sunset; the
 * deprecation date is this service's first release, which shipped it already deprecated.
 */
export const SUNSET = {
  /** The instant from which getPet answers 410 Gone. */
  epochMillis: Date.UTC(2030, 11, 5),
  /** `Sunset` header value (RFC 8594, an HTTP-date). */
  httpDate: "Thu, 05 Dec 2030 00:00:00 GMT",
  /** `Deprecation` header value (RFC 9745, a structured-field date: `@` and Unix seconds). */
  deprecation: `@${Date.UTC(2026, 10, 21) / 1000}`,
  /** What replaces the withdrawn operation, as its 410 names it. */
  successor: `GET ${SUCCESSOR_PATH}`,
  /** `Link` header value naming the replacement. */
  successorLink: `<${SUCCESSOR_PATH}>; rel="successor-version"`
} as const
