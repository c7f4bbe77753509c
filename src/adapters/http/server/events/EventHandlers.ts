/** The `events` operation: the feed of changes, as keyset pages or as Server-Sent Events. */
import { Effect, type Scope, Stream } from "effect"
import { CursorExpired } from "../../../../domain/Errors.ts"
import type { EventId } from "../../../../domain/events/EventId.ts"
import type { StoreEvent } from "../../../../domain/events/StoreEvent.ts"
import { PAGE_LIMIT_DEFAULT } from "../../../../domain/paging/PageLimit.ts"
import type { Caller } from "../../../../domain/keys/Caller.ts"
import { EventLog } from "../../../../ports/events/EventLog.ts"
import { ApiKeys } from "../../../../ports/keys/ApiKeys.ts"
import { Api } from "../../api/Api.ts"
import * as EventJsonText from "../../api/EventJsonText.ts"
import { EVENT_STREAM } from "../../api/EventsApi.ts"
import type { Handlers } from "../routing/ApiRouter.ts"
import { keysetPage } from "../routing/KeysetPage.ts"
import * as Reply from "../routing/Reply.ts"
import { EventFanout } from "./EventFanout.ts"

const { listEvents } = Api.groups.events.endpoints

/**
 * Whether `accept` asks for the Server-Sent Events stream: one of its media ranges is
 * exactly `text/event-stream` (any case, parameters aside) with a weight above 0. A
 * wildcard or a longer type gets the page.
 */
export const wantsEventStream = (accept: string | undefined): boolean =>
  accept !== undefined && accept.split(",").some((range) => {
    const [type, ...parameters] = range.split(";").map((part) => part.trim())
    if (type?.toLowerCase() !== EVENT_STREAM) return false
    const weight = parameters.find((parameter) => /^q\s*=/i.test(parameter))
    return weight === undefined || Number(weight.replace(/^q\s*=\s*/i, "")) > 0
  })

/** The handler over the EventLog, the EventFanout and the ApiKeys in context. */
export const make = Effect.gen(function*() {
  const log = yield* EventLog
  const fanout = yield* EventFanout
  const keys = yield* ApiKeys

  // A cursor below what retention removed would skip events silently: 410 instead.
  const unexpired = (after: EventId | undefined) =>
    after === undefined ? Effect.void : Effect.flatMap(log.sweptThrough, (sweptThrough) =>
      after < sweptThrough ? Effect.fail(new CursorExpired({ after, sweptThrough })) : Effect.void)

  // A place among the instance's streams first: a refused stream costs no store query.
  // Without a cursor it starts at the log's end: the changes from now on (a reader that
  // wants the past pages it, or streams with `after`). The stream ends once its key is
  // revoked or expires (asked before each chunk), and when the store goes away: the
  // client resumes with Last-Event-ID.
  const stream = (caller: Caller, after: EventId | undefined, types: ReadonlyArray<StoreEvent["type"]> | undefined) =>
    Effect.gen(function*() {
      yield* fanout.admit
      yield* unexpired(after)
      const from = after ?? (yield* log.latest)
      return Reply.eventStream(
        fanout.follow({ after: from, types, allowed: keys.stillAccepts(caller) }).pipe(Stream.catch(() => Stream.empty))
      )
    })

  return {
    listEvents: ({ caller, headers, query }) => {
      if (wantsEventStream(headers.accept)) return stream(caller, headers["last-event-id"] ?? query.after, query.type)
      const limit = query.limit ?? PAGE_LIMIT_DEFAULT
      return Effect.gen(function*() {
        const rows = yield* log.page({ after: query.after ?? 0n, limit: limit + 1, types: query.type })
        // Checked after the read: a sweep that ran meanwhile is seen.
        yield* unexpired(query.after)
        const { link, page } = keysetPage(rows, {
          limit,
          path: listEvents.path,
          filters: [["type", query.type]],
          cursorOf: (last) => String(last.id),
          cursorName: "after"
        })
        return Reply.ok(EventJsonText.eventsJson(page), link === undefined ? undefined : { link })
      })
    }
  } satisfies Pick<Handlers<Scope.Scope>, "listEvents">
})
