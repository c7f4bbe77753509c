import type {
  CursorExpired as DomainCursorExpired,
  Gone as DomainGone,
  InsufficientScope,
  InvalidInput,
  OrderConflict,
  OrderNotFound,
  PetChanged,
  PetHasOpenOrder,
  PetNotAvailable,
  PetNotFound,
  StoreUnavailable,
  StreamLimitReached,
  Unauthorized as DomainUnauthorized
} from "../../../../domain/Errors.ts"
import type {
  IdempotencyKeyInUse as DomainIdempotencyKeyInUse,
  IdempotencyKeyReused as DomainIdempotencyKeyReused
} from "../../../../domain/idempotency/IdempotencyErrors.ts"
import type {
  InvalidImage,
  PhotoNotFound,
  PhotoTooLarge,
  ProcessingBusy,
  ProcessingUnavailable,
  PhotoUrlRefused,
  TooManyPhotos,
  UnsupportedImage
} from "../../../../domain/photos/PhotoErrors.ts"
import type { WebhookNotFound } from "../../../../domain/webhooks/WebhookErrors.ts"
import {
  CursorExpired,
  Forbidden,
  Gone,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  InvalidRequest,
  InvalidTransition,
  NotFound,
  PetHasOpenOrderConflict,
  PayloadTooLarge,
  PetNotAvailableConflict,
  PreconditionFailed,
  ServiceUnavailable,
  TooManyPhotosConflict,
  Unauthorized,
  UnsupportedMediaType
} from "../../api/ApiErrors.ts"

/** Every domain error an HTTP handler can meet. */
export type DomainError =
  | PetNotFound
  | OrderNotFound
  | WebhookNotFound
  | PetNotAvailable
  | PetChanged
  | PetHasOpenOrder
  | OrderConflict
  | InvalidInput
  | DomainUnauthorized
  | InsufficientScope
  | DomainGone
  | DomainCursorExpired
  | StoreUnavailable
  | StreamLimitReached
  | DomainIdempotencyKeyInUse
  | DomainIdempotencyKeyReused
  | PhotoNotFound
  | TooManyPhotos
  | UnsupportedImage
  | InvalidImage
  | PhotoTooLarge
  | ProcessingBusy
  | ProcessingUnavailable
  | PhotoUrlRefused

interface HttpErrorFor {
  readonly PetNotFound: NotFound
  readonly OrderNotFound: NotFound
  readonly WebhookNotFound: NotFound
  readonly PetNotAvailable: PetNotAvailableConflict
  readonly PetChanged: PreconditionFailed
  readonly PetHasOpenOrder: PetHasOpenOrderConflict
  readonly OrderConflict: InvalidTransition
  readonly InvalidInput: InvalidRequest
  readonly Unauthorized: Unauthorized
  readonly InsufficientScope: Forbidden
  readonly Gone: Gone
  readonly CursorExpired: CursorExpired
  readonly StoreUnavailable: ServiceUnavailable
  readonly StreamLimitReached: ServiceUnavailable
  readonly IdempotencyKeyInUse: IdempotencyKeyInUse
  readonly IdempotencyKeyReused: IdempotencyKeyReused
  readonly PhotoNotFound: NotFound
  readonly TooManyPhotos: TooManyPhotosConflict
  readonly UnsupportedImage: UnsupportedMediaType
  readonly InvalidImage: InvalidRequest
  readonly PhotoTooLarge: PayloadTooLarge
  readonly ProcessingBusy: ServiceUnavailable
  readonly ProcessingUnavailable: ServiceUnavailable
  readonly PhotoUrlRefused: Forbidden
}

const mappings: { readonly [K in DomainError["_tag"]]: (error: Extract<DomainError, { _tag: K }>) => HttpErrorFor[K] } = {
  PetNotFound: (error) => new NotFound({ message: error.message }),
  OrderNotFound: (error) => new NotFound({ message: error.message }),
  WebhookNotFound: (error) => new NotFound({ message: error.message }),
  PetNotAvailable: (error) => new PetNotAvailableConflict({ message: error.message }),
  PetChanged: (error) => new PreconditionFailed({ message: error.message }),
  PetHasOpenOrder: (error) => new PetHasOpenOrderConflict({ message: error.message }),
  OrderConflict: (error) => new InvalidTransition({ message: error.message }),
  InvalidInput: (error) => new InvalidRequest({ message: error.message }),
  Unauthorized: (error) => new Unauthorized({ message: error.message, invalidToken: error.credential === "invalid" }),
  InsufficientScope: (error) => new Forbidden({ message: error.message }),
  Gone: (error) => new Gone({ message: error.message }),
  CursorExpired: (error) => new CursorExpired({ message: error.message }),
  StoreUnavailable: (error) => new ServiceUnavailable({ message: error.message }),
  StreamLimitReached: (error) => new ServiceUnavailable({ message: error.message }),
  IdempotencyKeyInUse: (error) => new IdempotencyKeyInUse({ message: error.message }),
  IdempotencyKeyReused: (error) => new IdempotencyKeyReused({ message: error.message }),
  PhotoNotFound: (error) => new NotFound({ message: error.message }),
  TooManyPhotos: (error) => new TooManyPhotosConflict({ message: error.message }),
  UnsupportedImage: (error) => new UnsupportedMediaType({ message: error.message }),
  InvalidImage: (error) => new InvalidRequest({ message: `body: ${error.message}` }),
  PhotoTooLarge: (error) => new PayloadTooLarge({ message: error.message }),
  ProcessingBusy: (error) => new ServiceUnavailable({ message: error.message }),
  ProcessingUnavailable: (error) => new ServiceUnavailable({ message: error.message }),
  PhotoUrlRefused: (error) => new Forbidden({ message: error.message })
}

/** The one place where domain errors become HTTP errors. */
export const toHttpError = <E extends DomainError>(error: E): HttpErrorFor[E["_tag"]] =>
  // TypeScript cannot correlate the record lookup with E; the mapped type above keeps each entry honest.
  (mappings[error._tag] as unknown as (error: E) => HttpErrorFor[E["_tag"]])(error)

/**
 * Seconds to wait before retrying, for the errors whose answer says so (`Retry-After`).
 * A duplicate of an idempotent create has already waited 1 s for the first request, whose
 * create usually takes milliseconds. A full instance's streams last as long as their
 * clients stay, so a place frees up rarely: 5 s keeps a crowd of refused subscribers from
 * asking again every second. A busy photo queue names its own wait (ProcessingBusy.retryAfter).
 */
const RETRY_AFTER_SECONDS: { readonly [K in DomainError["_tag"]]?: number } = {
  IdempotencyKeyInUse: 1,
  StreamLimitReached: 5
}

/** The headers of an error's answer besides its body: `Retry-After` for the errors that name a wait. */
export const headersOf = (error: DomainError): Readonly<Record<string, string>> | undefined => {
  const seconds = error._tag === "ProcessingBusy" ? error.retryAfter : RETRY_AFTER_SECONDS[error._tag]
  return seconds === undefined ? undefined : { "retry-after": String(seconds) }
}
