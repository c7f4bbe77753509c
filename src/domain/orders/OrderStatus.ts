import { Schema } from "effect"

/** Where an order is in its life: open while `placed` or `approved`, final once `delivered` or `cancelled`. */
export const OrderStatus = Schema.Literals(["placed", "approved", "delivered", "cancelled"]).annotate({
  identifier: "OrderStatus",
  message: `must be one of "placed", "approved", "delivered", "cancelled"`
})
/** A value of {@link OrderStatus}. */
export type OrderStatus = typeof OrderStatus.Type

/** Whether an order in `status` is still open: a pet has at most one open order. */
export const isOpen = (status: OrderStatus): boolean => status === "placed" || status === "approved"

/** The classic petstore's `complete` flag: set exactly when the order is delivered. */
export const isComplete = (status: OrderStatus): boolean => status === "delivered"
