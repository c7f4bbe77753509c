import { Schema } from "effect"
import { StoreEvent } from "../../domain/events/StoreEvent.ts"

/**
 * An event as the log gives it to the service itself: the StoreEvent, and the W3C
 * `traceparent` of the span that recorded it, when spans were exported then, so that
 * work done later for the change (a webhook delivery) can link to the request's trace.
 * The API writes only the StoreEvent's fields, so the trace stays inside the service.
 */
export class LoggedEvent extends StoreEvent.extend<LoggedEvent>("LoggedEvent")({
  traceParent: Schema.optionalKey(Schema.String)
}) {}
