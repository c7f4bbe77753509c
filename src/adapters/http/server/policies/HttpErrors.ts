import type {
  CursorExpired as DomainCursorExpired,
  Gone as DomainGone,
  InsufficientScope,
  InvalidInput,
  OrderConflict,
  OrderNotFound,
  PetNotAvailable,
  PetNotFound,
  StoreUnavailable,
  Unauthorized as DomainUnauthorized
} from "../../../../domain/Errors.ts"
import type {
  IdempotencyKeyInUse as DomainIdempotencyKeyInUse,
  IdempotencyKeyReused as DomainIdempotencyKeyReused
} from "../../../../domain/idempotency/IdempotencyErrors.ts"
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
  PetNotAvailableConflict,
  ServiceUnavailable,
  Unauthorized
} from "../../api/ApiErrors.ts"

/** Every domain error an HTTP handler can meet. */
export type DomainError =
  | PetNotFound
  | OrderNotFound
  | WebhookNotFound
  | PetNotAvailable
  | OrderConflict
  | InvalidInput
  | DomainUnauthorized
  | InsufficientScope
  | DomainGone
  | DomainCursorExpired
  | StoreUnavailable
  | DomainIdempotencyKeyInUse
  | DomainIdempotencyKeyReused

interface HttpErrorFor {
  readonly PetNotFound: NotFound
  readonly OrderNotFound: NotFound
  readonly WebhookNotFound: NotFound
  readonly PetNotAvailable: PetNotAvailableConflict
  readonly OrderConflict: InvalidTransition
  readonly InvalidInput: InvalidRequest
  readonly Unauthorized: Unauthorized
  readonly InsufficientScope: Forbidden
  readonly Gone: Gone
  readonly CursorExpired: CursorExpired
  readonly StoreUnavailable: ServiceUnavailable
  readonly IdempotencyKeyInUse: IdempotencyKeyInUse
  readonly IdempotencyKeyReused: IdempotencyKeyReused
}

const mappings: { readonly [K in DomainError["_tag"]]: (error: Extract<DomainError, { _tag: K }>) => HttpErrorFor[K] } = {
  PetNotFound: (error) => new NotFound({ message: error.message }),
  OrderNotFound: (error) => new NotFound({ message: error.message }),
  WebhookNotFound: (error) => new NotFound({ message: error.message }),
  PetNotAvailable: (error) => new PetNotAvailableConflict({ message: error.message }),
  OrderConflict: (error) => new InvalidTransition({ message: error.message }),
  InvalidInput: (error) => new InvalidRequest({ message: error.message }),
  Unauthorized: (error) => new Unauthorized({ message: error.message, invalidToken: error.credential === "invalid" }),
  InsufficientScope: (error) => new Forbidden({ message: error.message }),
  Gone: (error) => new Gone({ message: error.message }),
  CursorExpired: (error) => new CursorExpired({ message: error.message }),
  StoreUnavailable: (error) => new ServiceUnavailable({ message: error.message }),
  IdempotencyKeyInUse: (error) => new IdempotencyKeyInUse({ message: error.message }),
  IdempotencyKeyReused: (error) => new IdempotencyKeyReused({ message: error.message })
}

/** The one place where domain errors become HTTP errors. */
export const toHttpError = <E extends DomainError>(error: E): HttpErrorFor[E["_tag"]] =>
  // TypeScript cannot correlate the record lookup with E; the mapped type above keeps each entry honest.
  (mappings[error._tag] as unknown as (error: E) => HttpErrorFor[E["_tag"]])(error)
