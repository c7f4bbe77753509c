import { HttpApiMiddleware } from "effect/http-api"
import { UnsupportedMediaType } from "./ApiErrors.ts"

/**
 * Requires a JSON `Content-Type` on a request body. HttpApi itself treats a body
 * with no content type as JSON; this API refuses it with 415 instead.
 */
export class JsonContentType extends HttpApiMiddleware.Service<JsonContentType>()("animal-store/http/JsonContentType", {
  error: UnsupportedMediaType
}) {}

// application/json, with or without parameters such as charset.
const JSON_MEDIA_TYPE = /^application\/json\s*(?:;|$)/i

/** Whether a request's `Content-Type` declares JSON. */
export const isJsonContentType = (contentType: string | undefined): contentType is string =>
  contentType !== undefined && JSON_MEDIA_TYPE.test(contentType)

/** The 415 for a request body declared as anything but JSON (or not declared). */
export const unsupportedMediaType = (contentType: string | undefined): UnsupportedMediaType =>
  new UnsupportedMediaType({ message: `content-type ${contentType ?? "(none)"} is not supported; send application/json` })
