/** The `events` operation: the feed of changes, as keyset pages or as Server-Sent Events. */
import { Effect, type Scope, Stream } from "effect"
import { CursorExpired } from "../../../../domain/Errors.ts"
import type { EventId } from "../../../../domain/events/EventId.ts"
import type { StoreEvent } from "../../../../domain/events/StoreEvent.ts"
import { PAGE_LIMIT_DEFAULT } from "../../../../domain/paging/PageLimit.ts"
import { EventLog } from "../../../../ports/events/EventLog.ts"
import { Api } from "../../api/Api.ts"
import * as EventJsonText from "../../api/EventJsonText.ts"
import { EVENT_STREAM } from "../../api/EventsApi.ts"
import type { Handlers } from "../routing/ApiRouter.ts"
import { keysetPage } from "../routing/KeysetPage.ts"
import * as Reply from "../routing/Reply.ts"
import { EventFanout } from "./EventFanout.ts"

const { listEvents } = Api.groups.events.endpoints

// One SSE frame per event: its id (what Last-Event-ID sends back), its type, its JSON.
const frame = (event: StoreEvent) => `id: ${event.id}\nevent: ${event.type}\ndata: ${EventJsonText.eventJson(event)}\n\n`

/** The handler over the EventLog and the EventFanout in context. */
export const make = Effect.gen(function*() {
  const log = yield* EventLog
  const fanout = yield* EventFanout

  // A cursor below what retention removed would skip events silently: 410 instead.
  const unexpired = (after: EventId | undefined) =>
    after === undefined ? Effect.void : Effect.flatMap(log.sweptThrough, (sweptThrough) =>
      after < sweptThrough ? Effect.fail(new CursorExpired({ after, sweptThrough })) : Effect.void)

  // A place among the instance's streams first: a refused stream costs no store query.
  const stream = (after: EventId | undefined, types: ReadonlyArray<StoreEvent["type"]> | undefined) =>
    Effect.as(
      Effect.andThen(fanout.admit, unexpired(after)),
      Reply.eventStream(
        Stream.merge(
          // A first line at once, so that the client knows the stream is open.
          Stream.concat(Stream.make(": connected\n\n"), Stream.map(fanout.follow(after ?? 0n, types), frame)).pipe(
            // The store went away: the stream ends, and the client resumes with Last-Event-ID.
            Stream.catch(() => Stream.empty)
          ),
          Stream.tick(fanout.heartbeat).pipe(Stream.drop(1), Stream.map(() => ": heartbeat\n\n")),
          { haltStrategy: "left" }
        ).pipe(Stream.encodeText)
      )
    )

  return {
    listEvents: ({ headers, query }) => {
      if (headers.accept?.includes(EVENT_STREAM) === true) return stream(headers["last-event-id"] ?? query.after, query.type)
      const limit = query.limit ?? PAGE_LIMIT_DEFAULT
      return Effect.gen(function*() {
        const rows = yield* log.page({ after: query.after ?? 0n, limit: limit + 1, types: query.type })
        // Checked after the read: a sweep that ran meanwhile is seen.
        yield* unexpired(query.after)
        const { link, page } = keysetPage(rows, {
          limit,
          path: listEvents.path,
          filters: [["type", query.type]],
          cursorOf: String,
          cursorName: "after"
        })
        return Reply.ok(EventJsonText.eventsJson(page), link === undefined ? undefined : { link })
      })
    }
  } satisfies Pick<Handlers<Scope.Scope>, "listEvents">
})
