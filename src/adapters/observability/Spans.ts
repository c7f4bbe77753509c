/**
 * The span of a service method ("PetRepository.get"), made only when a tracer that
 * exports is set. `Effect.fn(name)` builds an `Error` on every call to capture its call
 * site and opens a span even under effect's native tracer, whose spans nothing reads:
 * with no exporter configured (see Tracing.ts), that was work on every port call for
 * nothing. With an exporter the span is the same, named the same, without the call-site
 * stack trace.
 */
import { Effect, type Fiber, References, Tracer } from "effect"

/** Whether spans made in this fiber reach an exporter: tracing on, and a tracer other than the native one. */
export const observed = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.getRef(References.TracerEnabled) && fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer

/** `effect` inside a span named `name` when spans are observed, else `effect` as it is. */
export const span = (name: string) => {
  const withSpan = Effect.withSpan(name, undefined, { captureStackTrace: false })
  return <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiber((fiber) => observed(fiber) ? withSpan(effect) : effect)
}

/**
 * A service method whose every call runs in a span named `name` when spans are observed;
 * `body` runs when the returned effect does, as under `Effect.fn` (generator bodies: wrap
 * them in `Effect.fnUntraced`).
 */
export const method = <Args extends ReadonlyArray<unknown>, A, E, R>(
  name: string,
  body: (...args: Args) => Effect.Effect<A, E, R>
): (...args: Args) => Effect.Effect<A, E, R> => {
  const withSpan = Effect.withSpan(name, undefined, { captureStackTrace: false })
  return (...args) => Effect.withFiber((fiber) => observed(fiber) ? withSpan(body(...args)) : body(...args))
}
