import { type Cause, Effect, Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"

/** The realm every 401 challenge names (RFC 6750). */
export const AUTH_REALM = "animal-store"

/** Every error code the API can answer with, and its HTTP status. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  pet_not_available: 409,
  invalid_transition: 409,
  idempotency_key_in_use: 409,
  pet_has_open_order: 409,
  too_many_photos: 409,
  gone: 410,
  cursor_expired: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  idempotency_key_reused: 422,
  rate_limited: 429,
  request_header_fields_too_large: 431,
  internal: 500,
  service_unavailable: 503
} as const

/** An error code of {@link ERROR_STATUS}. */
export type ErrorCode = keyof typeof ERROR_STATUS

/** Every error code, for documentation and tests. */
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ReadonlyArray<ErrorCode>

// Statuses that several codes share (409) have no code of their own.
const CODE_BY_STATUS = new Map<number, ErrorCode>(
  ERROR_CODES.filter((code) => ERROR_CODES.filter((other) => ERROR_STATUS[other] === ERROR_STATUS[code]).length === 1)
    .map((code) => [ERROR_STATUS[code], code])
)

/** The code of an error status, when exactly one code has that status. */
export const codeOfStatus = (status: number): ErrorCode | undefined => CODE_BY_STATUS.get(status)

// Every error body is {code, message, status}; code and status are fixed per class, so
// `new NotFound({ message })` is all a handler writes.
const fields = <const Code extends string, const Status extends number>(code: Code, status: Status) => ({
  code: Schema.Literal(code).pipe(Schema.withConstructorDefault(Effect.succeed(code))),
  message: Schema.String,
  status: Schema.Literal(status).pipe(Schema.withConstructorDefault(Effect.succeed(status)))
})
const errorFields = <const Code extends ErrorCode>(code: Code) => fields(code, ERROR_STATUS[code])

/**
 * The error class of one row of {@link ERROR_STATUS}: its body is `{code, message, status}`
 * and HttpApi answers it with that status. `_tag` discriminates it for `Effect.catchTag`;
 * it sits on the prototype, so it is not part of the body.
 */
const ApiError = <Self>() =>
<const Tag extends string, const Code extends ErrorCode>(
  tag: Tag,
  code: Code
): Schema.Class<Self, Schema.Struct<ReturnType<typeof errorFields<Code>>>, Cause.YieldableError & { readonly _tag: Tag }> => {
  // Each subclass below fixes Self; Schema.Error's missing-Self check cannot see that through a type parameter.
  const base = Schema.Error<Self>(tag)(errorFields(code), { httpApiStatus: ERROR_STATUS[code] }) as unknown as Schema.Class<
    Self,
    Schema.Struct<ReturnType<typeof errorFields<Code>>>,
    Cause.YieldableError & { readonly _tag: Tag }
  >
  Object.defineProperty(base.prototype, "_tag", { value: tag })
  return base
}

/** 400: the request is malformed or breaks a rule; the message names the field. */
export class InvalidRequest extends ApiError<InvalidRequest>()("InvalidRequest", "invalid_request") {}

/** 401 without the challenge header; see {@link UnauthorizedResponse}. */
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")({
  ...errorFields("unauthorized"),
  /** True when a credential was sent but is wrong: the challenge then says `error="invalid_token"`. */
  invalidToken: Schema.Boolean
}) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "Unauthorized" as const
}

/** The `WWW-Authenticate` challenge of a 401; `invalidToken` when a key was presented but refused. */
export const challengeOf = (invalidToken: boolean): string =>
  invalidToken ? `Bearer realm="${AUTH_REALM}", error="invalid_token"` : `Bearer realm="${AUTH_REALM}"`

/**
 * 401 with `WWW-Authenticate: Bearer realm="animal-store"`, plus `error="invalid_token"`
 * when a key was presented but refused (RFC 6750 section 3).
 */
export const UnauthorizedResponse = Unauthorized.pipe(
  HttpApiSchema.encodeToWithHeaders(
    {
      body: Schema.Struct(errorFields("unauthorized")).pipe(HttpApiSchema.status(ERROR_STATUS.unauthorized)),
      headers: { "www-authenticate": Schema.String }
    },
    {
      decode: ({ body, headers }) =>
        new Unauthorized({ message: body.message, invalidToken: headers["www-authenticate"].includes("invalid_token") }),
      encode: (error) => ({
        body: { code: error.code, message: error.message, status: error.status },
        headers: { "www-authenticate": challengeOf(error.invalidToken) }
      })
    }
  )
)

/** 403: the key is valid but its scope does not allow the operation (a `read` key on a write). */
export class Forbidden extends ApiError<Forbidden>()("Forbidden", "forbidden") {}

/** 404: no such pet or order (or no such route). */
export class NotFound extends ApiError<NotFound>()("NotFound", "not_found") {}

/** 405: the path exists but not for this method; the response carries `Allow`. */
export class MethodNotAllowed extends ApiError<MethodNotAllowed>()("MethodNotAllowed", "method_not_allowed") {}

/** 408: the request did not arrive in time (headers or the whole request); the connection is closed. */
export class RequestTimeout extends ApiError<RequestTimeout>()("RequestTimeout", "request_timeout") {}

/** 409: an order can be placed only for an available pet. */
export class PetNotAvailableConflict
  extends ApiError<PetNotAvailableConflict>()("PetNotAvailableConflict", "pet_not_available")
{}

/** 409: the order's state does not allow the transition; the message names the state. */
export class InvalidTransition extends ApiError<InvalidTransition>()("InvalidTransition", "invalid_transition") {}

/** 409: a request with the same `Idempotency-Key` is still being processed. */
export class IdempotencyKeyInUse extends ApiError<IdempotencyKeyInUse>()("IdempotencyKeyInUse", "idempotency_key_in_use") {}

/** 409: orders own a pet's status while one is open: no status change, no delete. */
export class PetHasOpenOrderConflict
  extends ApiError<PetHasOpenOrderConflict>()("PetHasOpenOrderConflict", "pet_has_open_order")
{}

/** 409: the pet already has as many photos as a pet may have; delete one first. */
export class TooManyPhotosConflict extends ApiError<TooManyPhotosConflict>()("TooManyPhotosConflict", "too_many_photos") {}

/** 412: `If-Match` names a version the pet no longer has; nothing was changed. */
export class PreconditionFailed extends ApiError<PreconditionFailed>()("PreconditionFailed", "precondition_failed") {}

/** 410: the operation passed its sunset date and is withdrawn. */
export class Gone extends ApiError<Gone>()("Gone", "gone") {}

/** 410: the feed cursor points before events that retention has removed; read again without `after`. */
export class CursorExpired extends ApiError<CursorExpired>()("CursorExpired", "cursor_expired") {}

/** 413: the request body is larger than the service accepts. */
export class PayloadTooLarge extends ApiError<PayloadTooLarge>()("PayloadTooLarge", "payload_too_large") {}

/** 415: the request body is not of a type the operation takes (JSON, or for a photo an image). */
export class UnsupportedMediaType
  extends ApiError<UnsupportedMediaType>()("UnsupportedMediaType", "unsupported_media_type")
{}

/** 417: an `Expect` header other than `100-continue`. */
export class ExpectationFailed extends ApiError<ExpectationFailed>()("ExpectationFailed", "expectation_failed") {}

/** 422: an `Idempotency-Key` already used with a different request body. */
export class IdempotencyKeyReused extends ApiError<IdempotencyKeyReused>()("IdempotencyKeyReused", "idempotency_key_reused") {}

/** 429: the key (or, without a valid key, the client address) is over its rate limit. */
export class RateLimited extends ApiError<RateLimited>()("RateLimited", "rate_limited") {}

/** 431: the request headers are too large or too many; the connection is closed. */
export class RequestHeaderFieldsTooLarge
  extends ApiError<RequestHeaderFieldsTooLarge>()("RequestHeaderFieldsTooLarge", "request_header_fields_too_large")
{}

/** 500: a bug. The message never carries internals; the log has the details. */
export class Internal extends ApiError<Internal>()("Internal", "internal") {}

/** 503: the store is unreachable or too slow right now; retrying later may succeed. */
export class ServiceUnavailable extends ApiError<ServiceUnavailable>()("ServiceUnavailable", "service_unavailable") {}

/**
 * What an idempotent JSON create may answer besides its own refusals: a key in use or
 * reused, a body too large or of another type, a rate limit, the store away, a bug.
 */
export const IDEMPOTENT_CREATE_ERRORS = [
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  PayloadTooLarge,
  UnsupportedMediaType,
  RateLimited,
  ServiceUnavailable,
  Internal
] as const
