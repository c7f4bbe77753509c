import { Schema } from "effect"
import { Int64 } from "../Int64.ts"

/** Identifier of an order: an int64 assigned by the store, starting at 1. */
export const OrderId = Int64.pipe(Schema.brand("OrderId"))
/** A value of {@link OrderId}. */
export type OrderId = typeof OrderId.Type
