import { Effect, Layer } from "effect"
import { InsufficientScope } from "../../../domain/Errors.ts"
import { allows } from "../../../domain/keys/KeyScope.ts"
import { CurrentCaller } from "../api/Authorization.ts"
import { WriteScope } from "../api/WriteScope.ts"
import { toHttpError } from "./HttpErrors.ts"

/** Refuses a `read` key on a write operation with 403. */
export const layer = Layer.succeed(WriteScope)(Effect.fn("WriteScope")(function*(httpEffect, { endpoint }) {
  const caller = yield* CurrentCaller
  if (!allows(caller.scope, "write")) {
    return yield* toHttpError(new InsufficientScope({ scope: caller.scope, operation: endpoint.identifier }))
  }
  return yield* httpEffect
}))
