import { Effect, Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"

/** The realm every 401 challenge names (RFC 6750). */
export const AUTH_REALM = "animal-store"

// Every error body is {code, message, status}; code and status are fixed per class, so
// `new NotFound({ message })` is all a handler writes.
const errorFields = <const Code extends string, const Status extends number>(code: Code, status: Status) => ({
  code: Schema.Literal(code).pipe(Schema.withConstructorDefault(Effect.succeed(code))),
  message: Schema.String,
  status: Schema.Literal(status).pipe(Schema.withConstructorDefault(Effect.succeed(status)))
})

/** 400: the request is malformed or breaks a rule; the message names the field. */
export class InvalidRequest extends Schema.Error<InvalidRequest>("InvalidRequest")(
  errorFields("invalid_request", 400),
  { httpApiStatus: 400 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "InvalidRequest" as const
}

/** 401 without the challenge header; see {@link UnauthorizedResponse}. */
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")({
  ...errorFields("unauthorized", 401),
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
      body: Schema.Struct(errorFields("unauthorized", 401)).pipe(HttpApiSchema.status(401)),
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

/** 404: no such pet (or no such route). */
export class NotFound extends Schema.Error<NotFound>("NotFound")(
  errorFields("not_found", 404),
  { httpApiStatus: 404 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "NotFound" as const
}

/** 405: the path exists but not for this method; the response carries `Allow`. */
export class MethodNotAllowed extends Schema.Error<MethodNotAllowed>("MethodNotAllowed")(
  errorFields("method_not_allowed", 405),
  { httpApiStatus: 405 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "MethodNotAllowed" as const
}

/** 408: the request did not arrive in time (headers or the whole request); the connection is closed. */
export class RequestTimeout extends Schema.Error<RequestTimeout>("RequestTimeout")(
  errorFields("request_timeout", 408),
  { httpApiStatus: 408 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "RequestTimeout" as const
}

/** 410: the operation passed its sunset date and is withdrawn. */
export class Gone extends Schema.Error<Gone>("Gone")(
  errorFields("gone", 410),
  { httpApiStatus: 410 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "Gone" as const
}

/** 413: the request body is larger than the service accepts. */
export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")(
  errorFields("payload_too_large", 413),
  { httpApiStatus: 413 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "PayloadTooLarge" as const
}

/** 415: the request body is not declared as JSON. */
export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")(
  errorFields("unsupported_media_type", 415),
  { httpApiStatus: 415 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "UnsupportedMediaType" as const
}

/** 417: an `Expect` header other than `100-continue`. */
export class ExpectationFailed extends Schema.Error<ExpectationFailed>("ExpectationFailed")(
  errorFields("expectation_failed", 417),
  { httpApiStatus: 417 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "ExpectationFailed" as const
}

/** 431: the request headers are too large or too many; the connection is closed. */
export class RequestHeaderFieldsTooLarge extends Schema.Error<RequestHeaderFieldsTooLarge>("RequestHeaderFieldsTooLarge")(
  errorFields("request_header_fields_too_large", 431),
  { httpApiStatus: 431 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "RequestHeaderFieldsTooLarge" as const
}

/** 500: a bug. The message never carries internals; the log has the details. */
export class Internal extends Schema.Error<Internal>("Internal")(
  errorFields("internal", 500),
  { httpApiStatus: 500 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "Internal" as const
}

/** 503: the store is unreachable or too slow right now; retrying later may succeed. */
export class ServiceUnavailable extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")(
  errorFields("service_unavailable", 503),
  { httpApiStatus: 503 }
) {
  /** Discriminates the error for `Effect.catchTag`; not part of the JSON body. */
  readonly _tag = "ServiceUnavailable" as const
}

/** Every error code the API can answer with, for documentation and tests. */
export const ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "request_timeout",
  "gone",
  "payload_too_large",
  "unsupported_media_type",
  "expectation_failed",
  "request_header_fields_too_large",
  "internal",
  "service_unavailable"
] as const
