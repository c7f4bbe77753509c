import { Effect, Layer } from "effect"
import { EventId } from "../../../domain/events/EventId.ts"
import { EventLog } from "../../../ports/events/EventLog.ts"
import { EventTable } from "./EventTable.ts"
import * as Spans from "../../observability/Spans.ts"

/** An EventLog over `events`, which the memory repositories append to (see StoreMemory). */
export const fromTable = (events: EventTable): EventLog["Service"] =>
  EventLog.of({
    page: Spans.method("EventLog.page", (query) => Effect.sync(() => events.page(query.after, query.limit, query.types))),
    latest: Effect.sync(() => events.lastId === 0n ? 0n : EventId.make(events.lastId)),
    // Copies: a claim reads them after this step, while appends and sweeps go on.
    heads: Effect.sync(() => ({ latest: new Map(events.heads), swept: new Map(events.sweptHeads) })),
    sweptThrough: Effect.sync(() => events.sweptThrough === 0n ? 0n : EventId.make(events.sweptThrough)),
    sweep: Spans.method("EventLog.sweep", (query) => Effect.sync(() => events.sweep(query.before, query.limit))),
    appended: events.appended
  })

/** An EventLog of its own that nothing appends to: for hosts that serve no store's changes. */
export const layerEmpty: Layer.Layer<EventLog> = Layer.sync(EventLog, () => fromTable(new EventTable()))
