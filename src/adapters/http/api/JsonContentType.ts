import { HttpApiMiddleware } from "effect/http-api"
import { UnsupportedMediaType } from "./ApiErrors.ts"

/**
 * Requires a JSON `Content-Type` on a request body. HttpApi itself treats a body
 * with no content type as JSON; this API refuses it with 415 instead.
 */
export class JsonContentType extends HttpApiMiddleware.Service<JsonContentType>()("animal-store/http/JsonContentType", {
  error: UnsupportedMediaType
}) {}
