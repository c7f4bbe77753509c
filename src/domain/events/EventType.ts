import { Schema } from "effect"
import type { OrderEvent } from "../orders/OrderEvent.ts"

/**
 * What changed. One type per change a caller can make: a pet created, edited or retired,
 * a photo of a pet added or removed, and each step of an order's life.
 */
export const EventType = Schema.Literals([
  "pet.created",
  "pet.updated",
  "pet.deleted",
  "pet.photo_added",
  "pet.photo_removed",
  "order.placed",
  "order.approved",
  "order.delivered",
  "order.cancelled"
])
/** A value of {@link EventType}. */
export type EventType = typeof EventType.Type

/** The event each step of an order's life records. */
export const ORDER_EVENT_TYPE = {
  place: "order.placed",
  approve: "order.approved",
  deliver: "order.delivered",
  cancel: "order.cancelled"
} as const satisfies Record<OrderEvent, EventType>
