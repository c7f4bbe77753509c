/**
 * The trace context an event is recorded with (LoggedEvent's `traceParent`): the W3C
 * `traceparent` of the span current when the change is made, written as effect's HTTP
 * client propagates it. Captured only when spans are observed (see Spans): with no
 * exporter, nothing reads the context, so nothing is built.
 */
import { Context, type Fiber, Tracer } from "effect"
import { observed } from "./Spans.ts"

/** The `traceparent` of the span current in `fiber`; undefined when spans are not observed or none is current. */
export const current = (fiber: Fiber.Fiber<unknown, unknown>): string | undefined => {
  if (!observed(fiber)) return undefined
  const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
  return span === undefined
    ? undefined
    : `00-${span.traceId.padStart(32, "0")}-${span.spanId}-${span.sampled ? "01" : "00"}`
}
