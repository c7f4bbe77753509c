import { Schema } from "effect"
import { PetId } from "../pets/PetId.ts"
import { OrderId } from "./OrderId.ts"
import { OrderStatus } from "./OrderStatus.ts"

/**
 * How many animals an order is for. A pet is one animal with its own id, so an order
 * is for exactly one; the field stays so that clients of the classic petstore Order
 * find it.
 */
export const OrderQuantity = Schema.Literal(1).annotate({ message: "must be 1: an order is for one pet" })

/** An order for one pet, as the store keeps it. */
export class Order extends Schema.Class<Order>("Order")({
  id: OrderId,
  petId: PetId,
  quantity: OrderQuantity,
  status: OrderStatus,
  /** True once the order is delivered, as the classic petstore Order has it. */
  complete: Schema.Boolean,
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}
