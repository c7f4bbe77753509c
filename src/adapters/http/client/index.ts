/** A typed client for the Animal Store HTTP API. */
export * from "./AnimalStoreClient.ts"
// The errors the client's signatures name, so that a consumer's declarations can name them from here.
export {
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
  Unauthorized,
  UnsupportedMediaType
} from "../api/ApiErrors.ts"
