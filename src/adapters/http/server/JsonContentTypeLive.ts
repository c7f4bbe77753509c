import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { isJsonContentType, JsonContentType, unsupportedMediaType } from "../api/JsonContentType.ts"

/** Refuses a request body that is not declared as JSON. */
export const layer = Layer.succeed(JsonContentType)(Effect.fn("JsonContentType")(function*(httpEffect) {
  const contentType = (yield* HttpServerRequest.HttpServerRequest).headers["content-type"]
  if (!isJsonContentType(contentType)) return yield* unsupportedMediaType(contentType)
  return yield* httpEffect
}))
