import { Schema } from "effect"

/** What can happen to an order: `place` creates it, the others move it on. */
export const OrderEvent = Schema.Literals(["place", "approve", "deliver", "cancel"])
/** A value of {@link OrderEvent}. */
export type OrderEvent = typeof OrderEvent.Type

/** The events that act on an existing order. */
export type OrderTransitionEvent = Exclude<OrderEvent, "place">
