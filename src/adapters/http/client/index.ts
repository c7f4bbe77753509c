/** A typed client for the Animal Store HTTP API. */
export * from "./AnimalStoreClient.ts"
// Every error the client's signatures name, so that a consumer's declarations can name them
// from here (test/package/consumer/clientMethods.ts calls every method).
export {
  CursorExpired,
  ExpectationFailed,
  Forbidden,
  Gone,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  Internal,
  InvalidRequest,
  InvalidTransition,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  PetHasOpenOrderConflict,
  PetNotAvailableConflict,
  PreconditionFailed,
  RateLimited,
  RequestHeaderFieldsTooLarge,
  RequestTimeout,
  ServiceUnavailable,
  TooManyPhotosConflict,
  Unauthorized,
  UnsupportedMediaType
} from "../api/ApiErrors.ts"
