import { Effect, Schema } from "effect"
import { HttpApiBuilder, HttpApiSchema } from "effect/http-api"
import type { OrderTransitionEvent } from "../../../domain/orders/OrderEvent.ts"
import type { OrderId } from "../../../domain/orders/OrderId.ts"
import { PAGE_LIMIT_DEFAULT } from "../../../domain/PetQuery.ts"
import { OrderRepository } from "../../../ports/OrderRepository.ts"
import { PetRepository } from "../../../ports/PetRepository.ts"
import { Api } from "../api/Api.ts"
import { OrderCursorParam } from "../api/PathAndQuery.ts"
import { toHttpError } from "./HttpErrors.ts"
import { keysetPage } from "./KeysetPage.ts"

const encodeCursor = Schema.encodeSync(OrderCursorParam)

/** The `store` operations, on whichever OrderRepository and PetRepository are provided. */
export const layer = HttpApiBuilder.group(
  Api,
  "store",
  Effect.fn(function*(handlers) {
    const orders = yield* OrderRepository
    const pets = yield* PetRepository
    const transition = (event: OrderTransitionEvent) => ({ params }: { readonly params: { readonly orderId: OrderId } }) =>
      orders.transition(params.orderId, event).pipe(Effect.mapError(toHttpError))

    return handlers.handleAll({
      listOrders: ({ query }) =>
        Effect.gen(function*() {
          const limit = query.limit ?? PAGE_LIMIT_DEFAULT
          const rows = yield* orders.list({ limit: limit + 1, status: query.status, petId: query.petId, after: query.cursor })
          return keysetPage(rows, {
            limit,
            path: "/v1/store/orders",
            filters: [["status", query.status], ["petId", query.petId]],
            cursorOf: encodeCursor
          })
        }).pipe(Effect.mapError(toHttpError)),

      placeOrder: ({ payload }) =>
        orders.place(payload.petId).pipe(
          Effect.map((order) =>
            HttpApiSchema.withHeaders({ body: order, headers: { location: `/v1/store/orders/${order.id}` } })
          ),
          Effect.mapError(toHttpError)
        ),

      getOrder: ({ params }) => orders.get(params.orderId).pipe(Effect.mapError(toHttpError)),
      approveOrder: transition("approve"),
      deliverOrder: transition("deliver"),
      cancelOrder: transition("cancel"),
      getInventory: () => pets.inventory.pipe(Effect.mapError(toHttpError))
    })
  })
)
