/**
 * One request to a running service's admin routes (AdminRoutes), for their clients
 * (ApiKeyAdminHttp, WebhookAdminHttp): the admin token, a JSON body, a bounded wait, and
 * the answer decoded, or the refusal as the routes state it.
 */
import { Effect, Schema } from "effect"
import { StoreUnavailable } from "../../../domain/Errors.ts"
import type { AdminAddress } from "./AdminFile.ts"
import { RefusalJson } from "./AdminJson.ts"

const decodeRefusal = Schema.decodeUnknownOption(RefusalJson)

/** How long a request may take before the service is taken for not answering. */
const TIMEOUT_MILLIS = 15_000

/** What the routes answered: the decoded value, or a refusal to turn into the domain's error. */
export type Answer<A> =
  | { readonly _tag: "Answered"; readonly value: A }
  | { readonly _tag: "Refused"; readonly refusal: typeof RefusalJson.Type }

export const AdminCall = {
  /**
   * Sends `body` (JSON, when given) to `path` on the admin port at `address`. A service
   * that does not answer is StoreUnavailable; an answer that is neither `response` nor a
   * refusal is a defect (the two sides are one release).
   */
  send: <A>(
    address: AdminAddress,
    method: "GET" | "POST",
    path: string,
    response: Schema.Decoder<A>,
    body?: unknown
  ): Effect.Effect<Answer<A>, StoreUnavailable> =>
    Effect.gen(function*() {
      const answer = yield* Effect.tryPromise({
        try: async (signal) => {
          const reply = await fetch(`http://127.0.0.1:${address.port}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${address.token}`,
              ...(body === undefined ? {} : { "content-type": "application/json" })
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MILLIS)])
          })
          return { status: reply.status, json: await reply.json() as unknown }
        },
        catch: (cause) =>
          new StoreUnavailable({ message: `the service's admin port ${address.port} did not answer: ${String(cause)}` })
      })
      if (answer.status < 300) {
        return { _tag: "Answered", value: yield* Effect.orDie(Schema.decodeUnknownEffect(response)(answer.json)) } as const
      }
      const refusal = decodeRefusal(answer.json)
      if (refusal._tag === "None") return yield* Effect.die(new Error(`admin port answered ${answer.status}`))
      return { _tag: "Refused", refusal: refusal.value } as const
    })
}
