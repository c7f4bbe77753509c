import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { OrderQuantity } from "../../../domain/orders/Order.ts"
import { OrderId } from "../../../domain/orders/OrderId.ts"
import { OrderStatus } from "../../../domain/orders/OrderStatus.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import {
  IDEMPOTENT_CREATE_ERRORS,
  Internal,
  InvalidRequest,
  InvalidTransition,
  NotFound,
  PetNotAvailableConflict,
  RateLimited,
  ServiceUnavailable
} from "./ApiErrors.ts"
import { Authorization } from "./Authorization.ts"
import { IDEMPOTENCY_DESCRIPTION, IdempotencyKeyHeaders } from "./IdempotencyKeyHeader.ts"
import { JsonContentType } from "./JsonContentType.ts"
import { jsonInt64, LosslessJsonBody } from "./JsonInt64.ts"
import { LimitParam, OrderCursorParam, OrderIdParam, PetIdParam } from "./PathAndQuery.ts"
import { MAX_BODY_VALUES } from "./PetsApi.ts"
import { RequestValidation } from "./RequestValidation.ts"
import { WriteScope } from "./WriteScope.ts"
import { PageBody } from "./PageBody.ts"

/**
 * `quantity` on the wire. The lossless JSON reader turns every integer into a bigint, so
 * the wire side is an integer like the int64 fields, narrowed to the domain's number 1.
 */
const QuantityJson = jsonInt64(Schema.BigInt).pipe(
  Schema.decodeTo(
    OrderQuantity,
    // OrderQuantity checks what decode returns; the cast only states the type it checks for.
    SchemaTransformation.transform({ decode: (wire: bigint) => Number(wire) as 1, encode: (quantity: 1) => BigInt(quantity) })
  )
)

/** An order on the wire: int64 fields as bare JSON integers, times as RFC 3339 UTC strings. */
export const OrderJson = Schema.Struct({
  id: jsonInt64(OrderId),
  petId: jsonInt64(PetId),
  quantity: QuantityJson,
  status: OrderStatus,
  complete: Schema.Boolean,
  createdAt: Schema.DateTimeUtcFromString,
  updatedAt: Schema.DateTimeUtcFromString
}).annotate({ identifier: "Order" })

/** A page of orders. */
export const OrdersJson = Schema.Array(OrderJson).annotate({ identifier: "Orders" })

/** The placeOrder body. Unknown keys are ignored, as for pets. */
export const NewOrderJson = Schema.Struct({
  petId: jsonInt64(PetId),
  quantity: Schema.optionalKey(QuantityJson)
})

/** Pets by status, and those without one. */
export const InventoryJson = Schema.Struct({
  available: Schema.Int,
  pending: Schema.Int,
  sold: Schema.Int,
  none: Schema.Int
}).annotate({ identifier: "Inventory" })

const transitionEndpoint = <const Name extends string, const Action extends string>(
  name: Name,
  action: Action,
  description: string
) =>
  HttpApiEndpoint.post(name, `/store/orders/:orderId/${action}`, {
    params: { orderId: OrderIdParam },
    success: LosslessJsonBody(OrderJson),
    error: [InvalidRequest, NotFound, InvalidTransition, RateLimited, ServiceUnavailable, Internal]
  }).middleware(WriteScope).annotateMerge(OpenApi.annotations({ identifier: name, summary: `${action[0]!.toUpperCase()}${action.slice(1)} an order`, description }))

/** The store area: orders for pets, and the inventory, under bearer authentication. */
export class StoreGroup extends HttpApiGroup.make("store")
  .add(
    HttpApiEndpoint.get("listOrders", "/store/orders", {
      query: {
        limit: Schema.optionalKey(LimitParam),
        status: Schema.optionalKey(OrderStatus),
        petId: Schema.optionalKey(PetIdParam),
        cursor: Schema.optionalKey(OrderCursorParam)
      },
      success: PageBody(OrdersJson),
      error: [InvalidRequest, RateLimited, ServiceUnavailable, Internal]
    }).annotateMerge(OpenApi.annotations({
      identifier: "listOrders",
      summary: "List orders",
      description: "Orders in ascending id order, optionally by status and pet. When more exist, a " +
        "`Link: <...>; rel=\"next\"` header points at the next page (keyset cursor)."
    })),
    HttpApiEndpoint.post("placeOrder", "/store/orders", {
      headers: IdempotencyKeyHeaders,
      payload: LosslessJsonBody(NewOrderJson, { maxValues: MAX_BODY_VALUES }),
      success: HttpApiSchema.WithHeaders(LosslessJsonBody(OrderJson).pipe(HttpApiSchema.status(201)), {
        location: Schema.String
      }),
      error: [
        InvalidRequest,
        NotFound,
        PetNotAvailableConflict,
        ...IDEMPOTENT_CREATE_ERRORS
      ]
    }).middleware(JsonContentType)
      // Added after JsonContentType, so it runs before it: 403 comes before any look at the input.
      .middleware(WriteScope)
      .annotateMerge(OpenApi.annotations({
        identifier: "placeOrder",
        summary: "Order a pet",
        description: "Places an order for an available pet, which becomes `pending`. A pet that is not " +
          "available (pending, sold, or without a status) is a 409 `pet_not_available`; a pet has at most one open order. " +
          IDEMPOTENCY_DESCRIPTION
      })),
    HttpApiEndpoint.get("getOrder", "/store/orders/:orderId", {
      params: { orderId: OrderIdParam },
      success: LosslessJsonBody(OrderJson),
      error: [InvalidRequest, NotFound, RateLimited, ServiceUnavailable, Internal]
    }).annotateMerge(OpenApi.annotations({
      identifier: "getOrder",
      summary: "Get an order",
      description: "One order, with its state and the times it was placed and last changed."
    })),
    transitionEndpoint("approveOrder", "approve", "A `placed` order becomes `approved`; its pet stays `pending`."),
    transitionEndpoint("deliverOrder", "deliver", "An `approved` order becomes `delivered` (`complete`); its pet becomes `sold`."),
    transitionEndpoint(
      "cancelOrder",
      "cancel",
      "A `placed` or `approved` order becomes `cancelled`; its pet is `available` again."
    ),
    HttpApiEndpoint.get("getInventory", "/store/inventory", {
      success: InventoryJson,
      error: [RateLimited, ServiceUnavailable, Internal]
    }).annotateMerge(OpenApi.annotations({
      identifier: "getInventory",
      summary: "Count pets by status",
      description: "How many pets are `available`, `pending` and `sold`, and how many have no status (`none`)."
    }))
  )
  .middleware(RequestValidation)
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "Orders for the animals, and the inventory." }))
{}
