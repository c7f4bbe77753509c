import { Schema } from "effect"
import { Int64 } from "../Int64.ts"

/** Position of an event in the store's feed: an int64 assigned in commit order, starting at 1. */
export const EventId = Int64.pipe(Schema.brand("EventId"))
/** A value of {@link EventId}. */
export type EventId = typeof EventId.Type
