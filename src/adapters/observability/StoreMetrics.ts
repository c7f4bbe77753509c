/**
 * Store call metrics for any repository adapter: a layer that wraps the adapter it is
 * given, so memory, embedded and PostgreSQL are measured alike and no adapter carries
 * metrics code of its own. One decorator serves every port: it measures each method
 * the port's service has, labelled with the port and the method.
 */
import { type Cause, Context, Effect, Layer, Metric } from "effect"
import { OrderRepository } from "../../ports/orders/OrderRepository.ts"
import { PetRepository } from "../../ports/pets/PetRepository.ts"

/** Latency buckets, in seconds: 0.1 ms to 10 s (a store call can wait for its deadline). */
const DURATION_BOUNDARIES = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * How a store call ended: `not_found` and `refused` (the order state machine said no)
 * are answers; `unavailable` and `defect` are failures.
 */
type Outcome = "ok" | "not_found" | "refused" | "unavailable" | "defect"

// The errors of every member of a service: its effects' and its methods' results'.
type ErrorsOf<S> = {
  [K in keyof S]: S[K] extends Effect.Effect<unknown, infer E, unknown> ? E
    : S[K] extends (...args: ReadonlyArray<never>) => Effect.Effect<unknown, infer E, unknown> ? E
    : never
}[keyof S]

type PortError = ErrorsOf<PetRepository["Service"]> | ErrorsOf<OrderRepository["Service"]>

// Every error a port declares, and what it says about the call; the compiler keeps it complete.
const OUTCOME_OF_ERROR: Record<PortError["_tag"], Outcome> = {
  PetNotFound: "not_found",
  OrderNotFound: "not_found",
  PetNotAvailable: "refused",
  OrderConflict: "refused",
  PetChanged: "refused",
  PetHasOpenOrder: "refused",
  StoreUnavailable: "unavailable"
}

const OUTCOMES: ReadonlyArray<Outcome> = ["ok", "not_found", "refused", "unavailable", "defect"]

interface Series {
  readonly duration: Metric.Metric<number, unknown>
  readonly calls: Record<Outcome, Metric.Metric<number, unknown>>
}

// A port's series are made once, when its layer is built: the label sets are few and fixed.
const seriesOf = (port: string, method: string): Series => ({
  duration: Metric.histogram("store_call_duration_seconds", {
    description: "Duration of store calls, by port and method.",
    attributes: { port, method },
    boundaries: DURATION_BOUNDARIES
  }),
  calls: Object.fromEntries(OUTCOMES.map((outcome) => [
    outcome,
    Metric.counter("store_calls_total", {
      description: "Store calls, by port, method and outcome (ok, not_found, refused, unavailable, defect).",
      attributes: { port, method, outcome },
      incremental: true
    })
  ])) as Record<Outcome, Metric.Metric<number, unknown>>
})

const registryContext = Context.empty()

const outcomeOf = (cause: Cause.Cause<unknown>): Outcome => {
  const error = cause.reasons.find((reason) => reason._tag === "Fail")
  if (error === undefined) return "defect"
  return OUTCOME_OF_ERROR[(error.error as PortError)._tag]
}

const interruptedOnly = (cause: Cause.Cause<unknown>) => cause.reasons.every((reason) => reason._tag === "Interrupt")

// Recorded in the step that sees the call end: two steps of the runtime fewer than onExit's.
// An interrupted call (the client went away) is neither a success nor the store's failure;
// the runtime skips these handlers when it interrupts the fiber.
const measured = <A, E, R>(series: Series, call: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const started = performance.now()
    const record = (outcome: Outcome) => {
      series.duration.updateUnsafe((performance.now() - started) / 1000, registryContext)
      series.calls[outcome].updateUnsafe(1, registryContext)
    }
    return Effect.matchCauseEffect(call, {
      onSuccess: (value) => {
        record("ok")
        return Effect.succeed(value)
      },
      onFailure: (cause) => {
        if (!interruptedOnly(cause)) record(outcomeOf(cause))
        return Effect.failCause(cause)
      }
    })
  })

type Method = (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, unknown>

// Wraps each member of a port's service: an effect (`ready`) is measured as it is, a
// method on each call. The result has the service's own type, member by member.
const instrument = <S extends object>(port: string, service: S): S =>
  Object.fromEntries(Object.entries(service).map(([name, member]) => {
    const series = seriesOf(port, name)
    const method = member as Method
    return [
      name,
      Effect.isEffect(member) ? measured(series, member) : (...args: ReadonlyArray<unknown>) => measured(series, method(...args))
    ]
  })) as S

// Only for the ports above: their errors are the ones OUTCOME_OF_ERROR knows.
const measuredLayer = <I, S extends object>(service: Context.Service<I, S>, port: string): Layer.Layer<I, never, I> =>
  Layer.effect(
    service,
    Effect.gen(function*() {
      return instrument(port, yield* service)
    })
  )

/** Provides PetRepository as the wrapped one, every call measured with `port="PetRepository"`. */
export const petRepository: Layer.Layer<PetRepository, never, PetRepository> = measuredLayer(PetRepository, "PetRepository")

/** Provides OrderRepository as the wrapped one, every call measured with `port="OrderRepository"`. */
export const orderRepository: Layer.Layer<OrderRepository, never, OrderRepository> = measuredLayer(
  OrderRepository,
  "OrderRepository"
)
