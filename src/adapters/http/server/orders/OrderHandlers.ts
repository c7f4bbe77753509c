/** The `store` operations: orders, their transitions, and the inventory. */
import { Effect, Schema } from "effect"
import { placeOrderIdentity } from "../../../../domain/idempotency/IdempotentRequest.ts"
import type { Order } from "../../../../domain/orders/Order.ts"
import type { OrderTransitionEvent } from "../../../../domain/orders/OrderEvent.ts"
import type { OrderId } from "../../../../domain/orders/OrderId.ts"
import { PAGE_LIMIT_DEFAULT } from "../../../../domain/paging/PageLimit.ts"
import { OrderRepository } from "../../../../ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../../ports/pets/PetRepository.ts"
import { Api } from "../../api/Api.ts"
import { cursorOf } from "../../api/PathAndQuery.ts"
import { InventoryJson, OrderJson } from "../../api/StoreApi.ts"
import type { Handlers } from "../routing/ApiRouter.ts"
import { pathOf } from "../routing/EndpointPath.ts"
import { keysetPage } from "../routing/KeysetPage.ts"
import * as Reply from "../routing/Reply.ts"

const { getOrder, listOrders } = Api.groups.store.endpoints
const orderPath = pathOf<"orderId">(getOrder)
// Orders and the inventory are written by their wire schemas: RFC 3339 times, int64 digits.
const encodeOrder = Schema.encodeSync(OrderJson)
const encodeInventory = Schema.encodeSync(InventoryJson)
const orderJson = (order: Order) => JSON.stringify(encodeOrder(order))

/** The handlers over the OrderRepository and PetRepository in context. */
export const make = Effect.gen(function*() {
  const orders = yield* OrderRepository
  const pets = yield* PetRepository
  const transition = (event: OrderTransitionEvent) => ({ params }: { readonly params: { readonly orderId: OrderId } }) =>
    Effect.map(orders.transition(params.orderId, event), (order) => Reply.ok(orderJson(order)))
  return {
    listOrders: ({ query }) => {
      const limit = query.limit ?? PAGE_LIMIT_DEFAULT
      return Effect.map(
        orders.list({ limit: limit + 1, status: query.status, petId: query.petId, after: query.cursor }),
        (rows) => {
          const { link, page } = keysetPage(rows, {
            limit,
            path: listOrders.path,
            filters: [["status", query.status], ["petId", query.petId]],
            cursorOf: (last) => cursorOf(last.id)
          })
          return Reply.ok(JSON.stringify(page.map((order) => encodeOrder(order))), link === undefined ? undefined : { link })
        }
      )
    },
    placeOrder: {
      identity: ({ payload }) => placeOrderIdentity(payload.petId),
      handle: ({ payload }) =>
        Effect.map(orders.place(payload.petId), (order) => Reply.created(orderJson(order), orderPath({ orderId: order.id })))
    },
    getOrder: ({ params }) => Effect.map(orders.get(params.orderId), (order) => Reply.ok(orderJson(order))),
    approveOrder: transition("approve"),
    deliverOrder: transition("deliver"),
    cancelOrder: transition("cancel"),
    getInventory: () => Effect.map(pets.inventory, (inventory) => Reply.ok(JSON.stringify(encodeInventory(inventory))))
  } satisfies Pick<
    Handlers<never>,
    "listOrders" | "placeOrder" | "getOrder" | "approveOrder" | "deliverOrder" | "cancelOrder" | "getInventory"
  >
})
