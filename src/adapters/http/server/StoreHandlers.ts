import { Effect } from "effect"
import { HttpApiBuilder, HttpApiSchema } from "effect/http-api"
import type { OrderTransitionEvent } from "../../../domain/orders/OrderEvent.ts"
import type { OrderId } from "../../../domain/orders/OrderId.ts"
import { OrderRepository } from "../../../ports/OrderRepository.ts"
import { PetRepository } from "../../../ports/PetRepository.ts"
import { BuilderApi } from "./BuilderApi.ts"
import { toHttpError } from "./HttpErrors.ts"

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
    const transition = (event: OrderTransitionEvent) => ({ params }: { readonly params: { readonly orderId: OrderId } }) =>
      orders.transition(params.orderId, event).pipe(Effect.mapError(toHttpError))

    return handlers.handleAll({
      placeOrder: ({ payload }) =>
        orders.place(payload.petId).pipe(
          Effect.map((order) =>
            HttpApiSchema.withHeaders({ body: order, headers: { location: `/v1/store/orders/${order.id}` } })
          ),
          Effect.mapError(toHttpError)
        ),

      approveOrder: transition("approve"),
      deliverOrder: transition("deliver"),
      cancelOrder: transition("cancel"),
      getInventory: () => pets.inventory.pipe(Effect.mapError(toHttpError))
    })
  })
)
