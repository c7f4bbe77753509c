import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { UnsupportedMediaType } from "../api/ApiErrors.ts"
import { JsonContentType } from "../api/JsonContentType.ts"

// application/json, with or without parameters such as charset.
const JSON_MEDIA_TYPE = /^application\/json\s*(?:;|$)/i

/** Refuses a request body that is not declared as JSON. */
export const layer = Layer.succeed(JsonContentType)(Effect.fn("JsonContentType")(function*(httpEffect) {
  const contentType = (yield* HttpServerRequest.HttpServerRequest).headers["content-type"]
  if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType)) {
    return yield* new UnsupportedMediaType({
      message: `content-type ${contentType ?? "(none)"} is not supported; send application/json`
    })
  }
  return yield* httpEffect
}))
