import { Schema } from "effect"
import { EventId } from "./EventId.ts"
import { EventType } from "./EventType.ts"

/**
 * One change to the store, as integrators see it: written in the same transaction as the
 * change, so a committed change always has its event and a rolled-back one never does.
 * `data` is the resource after the change, in its API JSON form (int64 fields exact, as
 * the API writes them), so a feed reader and a webhook receiver see what a GET would.
 */
export class StoreEvent extends Schema.Class<StoreEvent>("StoreEvent")({
  id: EventId,
  type: EventType,
  occurredAt: Schema.DateTimeUtc,
  data: Schema.Unknown
}) {}
