import { Tracer } from "effect"

/**
 * A tracer that keeps every span it makes, in the order they start: installed, it is
 * "a tracer that exports" to the service (Spans, TraceParent), as OtlpTracer is.
 */
export const recordingTracer = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { tracer, spans }
}

/** The trace id and span id of a W3C `traceparent`. */
export const traceParentIds = (traceParent: string) => {
  const [, traceId, spanId] = traceParent.split("-")
  return { traceId, spanId }
}
