import { Effect } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { InvalidInput } from "../../../domain/Errors.ts"
import { RequestValidation } from "../api/RequestValidation.ts"
import { toHttpError } from "./HttpErrors.ts"

// How a message names the input when the issue is about all of it, not one field.
const WHOLE = { Params: "path", Query: "query", Headers: "headers", Payload: "body" } as const

/**
 * Answers undecodable path, query and body input with a 400 that names the field.
 * A response that fails to encode is our bug, so it becomes a defect (500).
 */
export const layer = HttpApiMiddleware.layerSchemaErrorTransform(RequestValidation, (error) => {
  switch (error.kind) {
    case "Body":
    case "ResponseHeaders":
      return Effect.die(error)
    default:
      return Effect.fail(toHttpError(InvalidInput.fromIssue(error.cause.issue, WHOLE[error.kind])))
  }
})
