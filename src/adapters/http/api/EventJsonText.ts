import { DateTime } from "effect"
import { eventDataText } from "../../../domain/events/EventData.ts"
import type { StoreEvent } from "../../../domain/events/StoreEvent.ts"

/**
 * An event as `EventJson` (EventsApi.ts) writes it, written by hand like petJson: the
 * schema's key order, int64 fields with every digit, `data` the resource's own JSON.
 */
export const eventJson = (event: StoreEvent): string =>
  `{"id":${event.id},"type":"${event.type}","occurredAt":"${DateTime.formatIso(event.occurredAt)}","data":${
    eventDataText(event.data)
  }}`

/** A page of events as `EventsJson` writes it. */
export const eventsJson = (events: ReadonlyArray<StoreEvent>): string => `[${events.map(eventJson).join(",")}]`
