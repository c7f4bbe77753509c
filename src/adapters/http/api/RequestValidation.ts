import { HttpApiMiddleware } from "effect/http-api"
import { InvalidRequest } from "./ApiErrors.ts"

/**
 * Turns HttpApi's request-decoding failures (by default an empty 400) into the
 * `invalid_request` Error body that names the offending field.
 */
export class RequestValidation
  extends HttpApiMiddleware.Service<RequestValidation>()("animal-store/http/RequestValidation", {
    error: InvalidRequest
  })
{}
