import { Effect, Schema } from "effect"
import { HttpApiBuilder, HttpApiSchema } from "effect/http-api"
import type { OrderTransitionEvent } from "../../../domain/orders/OrderEvent.ts"
import type { OrderId } from "../../../domain/orders/OrderId.ts"
import { IdempotentRequest, placeOrderIdentity } from "../../../domain/idempotency/IdempotentRequest.ts"
import { IdempotentCreates } from "../../../ports/IdempotentCreates.ts"
import { OrderRepository } from "../../../ports/OrderRepository.ts"
import { PetRepository } from "../../../ports/PetRepository.ts"
import { fingerprintOf } from "../../idempotency/RequestFingerprint.ts"
import { CurrentCaller } from "../api/Authorization.ts"
import { OrderJson } from "../api/StoreApi.ts"
import { BuilderApi } from "./BuilderApi.ts"
import { toHttpError } from "./HttpErrors.ts"
import * as IdempotentResponses from "./IdempotentResponses.ts"

// Orders are written by their wire schema, as the Api writes a placed order's body.
const encodeOrder = Schema.encodeSync(OrderJson)

/**
 * The `store` operations FastRoutes does not serve, on whichever OrderRepository and
 * PetRepository are provided.
 */
export const layer = HttpApiBuilder.group(
  BuilderApi,
  "store",
  Effect.fn(function*(handlers) {
    const orders = yield* OrderRepository
    const pets = yield* PetRepository
    const idempotent = yield* IdempotentCreates
    const transition = (event: OrderTransitionEvent) => ({ params }: { readonly params: { readonly orderId: OrderId } }) =>
      orders.transition(params.orderId, event).pipe(Effect.mapError(toHttpError))

    return handlers.handleAll({
      placeOrder: ({ headers, payload }) => {
        const key = headers["idempotency-key"]
        if (key === undefined) {
          return orders.place(payload.petId).pipe(
            Effect.map((order) =>
              HttpApiSchema.withHeaders({ body: order, headers: { location: `/v1/store/orders/${order.id}` } })
            ),
            Effect.mapError(toHttpError)
          )
        }
        // The kept answer is written here, as the Api would encode it, and sent as it was kept.
        return Effect.flatMap(Effect.service(CurrentCaller), (caller) =>
          IdempotentResponses.respond(idempotent.run(
            new IdempotentRequest(
              { keyId: caller.keyId, key, fingerprint: fingerprintOf(placeOrderIdentity(payload.petId)) },
              { disableChecks: true }
            ),
            orders.place(payload.petId).pipe(
              Effect.map((order) =>
                IdempotentResponses.created(JSON.stringify(encodeOrder(order)), `/v1/store/orders/${order.id}`)
              ),
              Effect.catchTags({
                PetNotFound: (error) => Effect.succeed(IdempotentResponses.refused(error)),
                PetNotAvailable: (error) => Effect.succeed(IdempotentResponses.refused(error))
              })
            )
          )))
      },

      approveOrder: transition("approve"),
      deliverOrder: transition("deliver"),
      cancelOrder: transition("cancel"),
      getInventory: () => pets.inventory.pipe(Effect.mapError(toHttpError))
    })
  })
)
