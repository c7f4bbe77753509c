import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { EventId } from "../../../domain/events/EventId.ts"
import { EventType } from "../../../domain/events/EventType.ts"
import { CursorExpired, Internal, InvalidRequest, RateLimited, ServiceUnavailable } from "./ApiErrors.ts"
import { Authorization } from "./Authorization.ts"
import { jsonInt64 } from "./JsonInt64.ts"
import { EventIdParam, LimitParam } from "./PathAndQuery.ts"
import { RequestValidation } from "./RequestValidation.ts"
import { PageBody } from "./PageBody.ts"

/** An event on the wire: `data` is the resource after the change, as a GET would answer it. */
export const EventJson = Schema.Struct({
  id: jsonInt64(EventId),
  type: EventType,
  occurredAt: Schema.DateTimeUtcFromString,
  data: Schema.Unknown.annotate({
    description: "The resource after the change: a Pet for pet.* events, an Order for order.* events."
  })
}).annotate({ identifier: "Event" })

/** A page of events. */
export const EventsJson = Schema.Array(EventJson).annotate({ identifier: "Events" })

/** The media type that asks for the Server-Sent Events stream instead of a page. */
export const EVENT_STREAM = "text/event-stream"

/** The feed of the store's changes, as pages or as a Server-Sent Events stream. */
export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("listEvents", "/events", {
      query: {
        after: Schema.optionalKey(EventIdParam),
        limit: Schema.optionalKey(LimitParam),
        type: Schema.optionalKey(Schema.Array(EventType))
      },
      headers: {
        accept: Schema.optionalKey(Schema.String),
        "last-event-id": Schema.optionalKey(EventIdParam)
      },
      success: PageBody(EventsJson),
      error: [InvalidRequest, CursorExpired, RateLimited, ServiceUnavailable, Internal]
    }).annotateMerge(OpenApi.annotations({
      identifier: "listEvents",
      summary: "Read the feed of changes",
      description: "Every change to pets and orders, in the order the store committed them, after the event id " +
        "`after` (from the oldest kept event without it), of the given `type`s (repeat the parameter for several). " +
        "When more exist, a `Link: <...>; rel=\"next\"` header points at the next page. With " +
        "`Accept: text/event-stream` the answer is a Server-Sent Events stream instead (`id:` the event id, " +
        "`event:` its type, `data:` the event JSON), resumable with `Last-Event-ID`, with a comment line as heartbeat; " +
        "without a cursor a stream starts at the log's end (`after=0` streams the whole kept log first). " +
        "A cursor older than retention (`EVENTS_RETENTION`) answers 410 `cursor_expired`. A stream beyond the " +
        "instance's limit (`EVENTS_MAX_STREAMS`) answers 503 `service_unavailable` with `Retry-After`."
    }))
  )
  .middleware(RequestValidation)
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "The feed of the store's changes." }))
{}
