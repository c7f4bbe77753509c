import { Effect, Layer } from "effect"
import { EventId } from "../../../domain/events/EventId.ts"
import { EventLog } from "../../../ports/events/EventLog.ts"
import { EventTable } from "./EventTable.ts"

/** An EventLog over `events`, which the memory repositories append to (see StoreMemory). */
export const fromTable = (events: EventTable): EventLog["Service"] =>
  EventLog.of({
    page: Effect.fn("EventLog.page")((query) => Effect.sync(() => events.page(query.after, query.limit, query.types))),
    latest: Effect.sync(() => events.lastId === 0n ? 0n : EventId.make(events.lastId)),
    sweptThrough: Effect.sync(() => events.sweptThrough === 0n ? 0n : EventId.make(events.sweptThrough)),
    sweep: Effect.fn("EventLog.sweep")((query) => Effect.sync(() => events.sweep(query.before, query.limit))),
    appended: events.appended
  })

/** An EventLog of its own that nothing appends to: for hosts that serve no store's changes. */
export const layerEmpty: Layer.Layer<EventLog> = Layer.sync(EventLog, () => fromTable(new EventTable()))
