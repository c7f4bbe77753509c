/**
 * Store call metrics for any PetRepository adapter: a layer that wraps the adapter it is
 * given, so memory, embedded and PostgreSQL are measured alike and no adapter carries
 * metrics code of its own.
 */
import { Context, Effect, Exit, Layer, Metric } from "effect"
import { PetRepository } from "../../ports/PetRepository.ts"

/** Latency buckets, in seconds: 0.1 ms to 10 s (a store call can wait for its deadline). */
const DURATION_BOUNDARIES = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

type Method = "create" | "get" | "list" | "ready"
/** How a store call ended: `not_found` is an answer, `unavailable` and `defect` are failures. */
type Outcome = "ok" | "not_found" | "unavailable" | "defect"

const METHODS: ReadonlyArray<Method> = ["create", "get", "list", "ready"]
const OUTCOMES: ReadonlyArray<Outcome> = ["ok", "not_found", "unavailable", "defect"]

// Every series is made up front: the label sets are few and fixed.
const durations = new Map(METHODS.map((method) => [
  method,
  Metric.histogram("store_call_duration_seconds", {
    description: "Duration of PetRepository calls, by port method.",
    attributes: { method },
    boundaries: DURATION_BOUNDARIES
  })
]))
const calls = new Map(METHODS.flatMap((method) =>
  OUTCOMES.map((outcome) => [
    `${method} ${outcome}`,
    Metric.counter("store_calls_total", {
      description: "PetRepository calls, by port method and outcome (ok, not_found, unavailable, defect).",
      attributes: { method, outcome },
      incremental: true
    })
  ] as const)
))

const registryContext = Context.empty()

const outcomeOf = (exit: Exit.Exit<unknown, { readonly _tag: string }>): Outcome => {
  if (Exit.isSuccess(exit)) return "ok"
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (error === undefined) return "defect"
  return error.error._tag === "PetNotFound" ? "not_found" : "unavailable"
}

const measured = <A, E extends { readonly _tag: string }, R>(method: Method, call: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const started = performance.now()
    return Effect.onExit(call, (exit) =>
      Effect.sync(() => {
        // An interrupted call (the client went away) is neither a success nor the store's failure.
        if (Exit.isFailure(exit) && exit.cause.reasons.every((reason) => reason._tag === "Interrupt")) return
        durations.get(method)!.updateUnsafe((performance.now() - started) / 1000, registryContext)
        calls.get(`${method} ${outcomeOf(exit)}`)!.updateUnsafe(1, registryContext)
      }))
  })

/** Provides PetRepository as the wrapped one, with every call measured. */
export const layer: Layer.Layer<PetRepository, never, PetRepository> = Layer.effect(
  PetRepository,
  Effect.gen(function*() {
    const store = yield* PetRepository
    return PetRepository.of({
      create: (pet) => measured("create", store.create(pet)),
      get: (id) => measured("get", store.get(id)),
      list: (query) => measured("list", store.list(query)),
      ready: measured("ready", store.ready)
    })
  })
)
