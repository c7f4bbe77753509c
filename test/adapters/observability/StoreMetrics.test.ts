import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Metric } from "effect"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import * as StoreMetrics from "../../../src/adapters/observability/StoreMetrics.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { OrderId } from "../../../src/domain/orders/OrderId.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { OrderRepository } from "../../../src/ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"

const measuredStore = Layer.mergeAll(StoreMetrics.petRepository, StoreMetrics.orderRepository).pipe(
  Layer.provide(StoreMemory.layer)
)

// The global registry's count for one series (the decorator writes there), 0 before its first call.
const calls = (labels: { readonly port: string; readonly method: string; readonly outcome: string }) =>
  Effect.map(Metric.snapshot, (snapshots) => {
    const series = snapshots.find((snapshot) =>
      snapshot.id === "store_calls_total" && snapshot.type === "Counter" &&
      JSON.stringify(snapshot.attributes) === JSON.stringify(labels)
    )
    return series?.type === "Counter" ? Number(series.state.count) : 0
  })

const durations = (labels: { readonly port: string; readonly method: string }) =>
  Effect.map(Metric.snapshot, (snapshots) => {
    const series = snapshots.find((snapshot) =>
      snapshot.id === "store_call_duration_seconds" && snapshot.type === "Histogram" &&
      JSON.stringify(snapshot.attributes) === JSON.stringify(labels)
    )
    return series?.type === "Histogram" ? series.state.count : 0
  })

describe("StoreMetrics", () => {
  it.effect("counts each port's calls by method and outcome, passing results through unchanged", () =>
    Effect.gen(function*() {
      const pets = yield* PetRepository
      const orders = yield* OrderRepository
      const series = [
        { port: "PetRepository", method: "create", outcome: "ok" },
        { port: "PetRepository", method: "get", outcome: "not_found" },
        { port: "PetRepository", method: "inventory", outcome: "ok" },
        { port: "OrderRepository", method: "place", outcome: "ok" },
        { port: "OrderRepository", method: "place", outcome: "refused" },
        { port: "OrderRepository", method: "transition", outcome: "refused" },
        { port: "OrderRepository", method: "get", outcome: "not_found" }
      ] as const
      const before = yield* Effect.forEach(series, calls)
      const placeDurations = yield* durations({ port: "OrderRepository", method: "place" })

      const pet = yield* pets.create(
        new NewPet({ name: PetName.make("Rex"), categoryId: CategoryId.make(1n), status: "available" })
      )
      assert.strictEqual((yield* Effect.flip(pets.get(PetId.make(0n))))._tag, "PetNotFound")
      assert.strictEqual((yield* pets.inventory).pending, 0)
      const order = yield* orders.place(pet.id)
      assert.strictEqual(order.petId, pet.id)
      assert.strictEqual((yield* Effect.flip(orders.place(pet.id)))._tag, "PetNotAvailable")
      assert.strictEqual((yield* Effect.flip(orders.transition(order.id, "deliver")))._tag, "OrderConflict")
      assert.strictEqual((yield* Effect.flip(orders.get(OrderId.make(0n))))._tag, "OrderNotFound")

      const after = yield* Effect.forEach(series, calls)
      assert.deepStrictEqual(after.map((count, i) => count - before[i]!), series.map(() => 1))
      assert.strictEqual((yield* durations({ port: "OrderRepository", method: "place" })) - placeDurations, 2)
    }).pipe(Effect.provide(measuredStore)))

  it.effect("counts a defect as one; an interrupted call (the client went away) is not counted at all", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const port = PetRepository.of({
        ...(yield* PetRepository),
        get: () => Effect.die(new Error("bug")),
        inventory: Effect.andThen(Deferred.succeed(started, undefined), Effect.never)
      })
      const measured = yield* PetRepository.pipe(Effect.provide(StoreMetrics.petRepository), Effect.provideService(PetRepository, port))
      const labels = ["ok", "not_found", "refused", "unavailable", "defect"].map((outcome) => ({
        port: "PetRepository", method: "inventory", outcome
      }))
      const before = yield* Effect.forEach(labels, calls)
      const defectsBefore = yield* calls({ port: "PetRepository", method: "get", outcome: "defect" })
      const durationsBefore = yield* durations({ port: "PetRepository", method: "inventory" })

      yield* Effect.exit(measured.get(PetId.make(1n)))
      const waiting = yield* Effect.forkChild(measured.inventory)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(waiting)

      assert.strictEqual((yield* calls({ port: "PetRepository", method: "get", outcome: "defect" })) - defectsBefore, 1)
      assert.deepStrictEqual(yield* Effect.forEach(labels, calls), before)
      assert.strictEqual(yield* durations({ port: "PetRepository", method: "inventory" }), durationsBefore)
    }).pipe(Effect.provide(StoreMemory.layer)))
})
