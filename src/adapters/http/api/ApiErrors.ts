import { Effect, Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"

/** The realm every 401 challenge names (RFC 6750). */
export const AUTH_REALM = "animal-store"

/** Every error code the API can answer with, and its HTTP status. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  pet_not_available: 409,
  invalid_transition: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
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

/** 400: the request is malformed or breaks a rule; the message names the field. */
export class InvalidRequest extends Schema.Error<InvalidRequest>("InvalidRequest")(
  errorFields("invalid_request"),
  { httpApiStatus: ERROR_STATUS.invalid_request }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "InvalidRequest" as const
}

/** 401 without the challenge header; see {@link UnauthorizedResponse}. */
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")({
  ...errorFields("unauthorized"),
  /** True when a credential was sent but is wrong: the challenge then says `error="invalid_token"`. */
  invalidToken: Schema.Boolean
}) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "Unauthorized" as const
}

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
        headers: {
          "www-authenticate": error.invalidToken
            ? `Bearer realm="${AUTH_REALM}", error="invalid_token"`
            : `Bearer realm="${AUTH_REALM}"`
        }
      })
    }
  )
)

/** 404: no such pet or order (or no such route). */
export class NotFound extends Schema.Error<NotFound>("NotFound")(
  errorFields("not_found"),
  { httpApiStatus: ERROR_STATUS.not_found }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "NotFound" as const
}

/** 405: the path exists but not for this method; the response carries `Allow`. */
export class MethodNotAllowed extends Schema.Error<MethodNotAllowed>("MethodNotAllowed")(
  errorFields("method_not_allowed"),
  { httpApiStatus: ERROR_STATUS.method_not_allowed }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "MethodNotAllowed" as const
}

/** 408: the request did not arrive in time (headers or the whole request); the connection is closed. */
export class RequestTimeout extends Schema.Error<RequestTimeout>("RequestTimeout")(
  errorFields("request_timeout"),
  { httpApiStatus: ERROR_STATUS.request_timeout }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "RequestTimeout" as const
}

/** 410: the operation passed its sunset date and is withdrawn. */
export class Gone extends Schema.Error<Gone>("Gone")(
  errorFields("gone"),
  { httpApiStatus: ERROR_STATUS.gone }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "Gone" as const
}

/** 413: the request body is larger than the service accepts. */
export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")(
  errorFields("payload_too_large"),
  { httpApiStatus: ERROR_STATUS.payload_too_large }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "PayloadTooLarge" as const
}

/** 415: the request body is not declared as JSON. */
export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")(
  errorFields("unsupported_media_type"),
  { httpApiStatus: ERROR_STATUS.unsupported_media_type }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "UnsupportedMediaType" as const
}

/** 417: an `Expect` header other than `100-continue`. */
export class ExpectationFailed extends Schema.Error<ExpectationFailed>("ExpectationFailed")(
  errorFields("expectation_failed"),
  { httpApiStatus: ERROR_STATUS.expectation_failed }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "ExpectationFailed" as const
}

/** 431: the request headers are too large or too many; the connection is closed. */
export class RequestHeaderFieldsTooLarge extends Schema.Error<RequestHeaderFieldsTooLarge>("RequestHeaderFieldsTooLarge")(
  errorFields("request_header_fields_too_large"),
  { httpApiStatus: ERROR_STATUS.request_header_fields_too_large }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "RequestHeaderFieldsTooLarge" as const
}

/** 500: a bug. The message never carries internals; the log has the details. */
export class Internal extends Schema.Error<Internal>("Internal")(
  errorFields("internal"),
  { httpApiStatus: ERROR_STATUS.internal }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "Internal" as const
}

/** 409: an order can be placed only for an available pet. */
export class PetNotAvailableConflict extends Schema.Error<PetNotAvailableConflict>("PetNotAvailableConflict")(
  errorFields("pet_not_available"),
  { httpApiStatus: ERROR_STATUS.pet_not_available }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "PetNotAvailableConflict" as const
}

/** 409: the order's state does not allow the transition; the message names the state. */
export class InvalidTransition extends Schema.Error<InvalidTransition>("InvalidTransition")(
  errorFields("invalid_transition"),
  { httpApiStatus: ERROR_STATUS.invalid_transition }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "InvalidTransition" as const
}

/** 503: the store is unreachable or too slow right now; retrying later may succeed. */
export class ServiceUnavailable extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")(
  errorFields("service_unavailable"),
  { httpApiStatus: ERROR_STATUS.service_unavailable }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "ServiceUnavailable" as const
}
