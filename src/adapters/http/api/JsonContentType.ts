import { HttpApiMiddleware } from "effect/http-api"
import { UnsupportedMediaType } from "./ApiErrors.ts"

/**
 * Requires a JSON `Content-Type` on a request body. HttpApi itself treats a body
 * with no content type as JSON; this API refuses it with 415 instead.
 */
export class JsonContentType extends HttpApiMiddleware.Service<JsonContentType>()("animal-store/http/JsonContentType", {
  error: UnsupportedMediaType
}) {}

/** The media type of every JSON body. */
export const JSON_MEDIA_TYPE = "application/json"

/** A JSON Merge Patch (RFC 7396); where an operation takes one, application/json is accepted too. */
export const MERGE_PATCH_MEDIA_TYPE = "application/merge-patch+json"

// The media type without its parameters (such as charset), which are case-insensitive names.
const essence = (contentType: string): string => contentType.split(";", 1)[0]!.trimEnd().toLowerCase()

/** Whether a request's `Content-Type` declares one of `accepted` (by default JSON), with or without parameters. */
export const isJsonContentType = (
  contentType: string | undefined,
  accepted: ReadonlyArray<string> = [JSON_MEDIA_TYPE]
): contentType is string => contentType !== undefined && accepted.includes(essence(contentType))

/** The 415 for a request body declared as none of `accepted` (or not declared). */
export const unsupportedMediaType = (
  contentType: string | undefined,
  accepted: ReadonlyArray<string> = [JSON_MEDIA_TYPE]
): UnsupportedMediaType =>
  new UnsupportedMediaType({
    message: `content-type ${contentType ?? "(none)"} is not supported; send ${accepted.join(" or ")}`
  })
