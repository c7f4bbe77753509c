import { Clock, DateTime, Effect, type Fiber, Layer, Result } from "effect"
import { PetNotFound } from "../../../domain/Errors.ts"
import { type EventData, petData, petUpdatedData } from "../../../domain/events/EventData.ts"
import type { EventType } from "../../../domain/events/EventType.ts"
import type { NewPet } from "../../../domain/pets/NewPet.ts"
import { decideDelete, decideUpdate, type PetPrecondition, type PetState } from "../../../domain/pets/PetChanges.ts"
import type { PetPatch } from "../../../domain/pets/PetPatch.ts"
import type { PetId } from "../../../domain/pets/PetId.ts"
import type { PetQuery, TagQuery } from "../../../domain/pets/PetQuery.ts"
import { PetRepository } from "../../../ports/pets/PetRepository.ts"
import { EventTable } from "../events/EventTable.ts"
import { PetTable } from "./PetTable.ts"
import * as Spans from "../../observability/Spans.ts"
import * as TraceParent from "../../observability/TraceParent.ts"

/**
 * A PetRepository over `pets`, which an OrderRepository may share (see StoreMemory), that
 * records each change in `events`, and `hasOpenOrder`, what that OrderRepository's table
 * says of a pet (no orders: never). Each method body runs synchronously inside one Effect
 * step, so concurrent fibers never observe a half-applied change, nor a change without its
 * event: `update` and `delete` read, decide, write and record with no effect in between.
 */
export const fromTables = (
  pets: PetTable,
  events: EventTable,
  hasOpenOrder: (id: PetId) => boolean = () => false
): PetRepository["Service"] => {
  const record = (fiber: Fiber.Fiber<unknown, unknown>, type: EventType, data: EventData) =>
    events.append(
      type,
      data,
      DateTime.makeUnsafe(fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()),
      TraceParent.current(fiber)
    )

  const create = Spans.method("PetRepository.create", (input: NewPet) =>
    Effect.withFiberSucceed((fiber) => {
      const pet = pets.insert(input)
      record(fiber, "pet.created", petData(pet))
      return pet
    }))

  const get = Spans.method("PetRepository.get", (id: PetId) => {
    const pet = pets.get(id)
    return pet === undefined ? Effect.fail(new PetNotFound({ id })) : Effect.succeed(pet)
  })

  const stateOf = (id: PetId): Result.Result<PetState, PetNotFound> => {
    const pet = pets.get(id)
    return pet === undefined ? Result.fail(new PetNotFound({ id })) : Result.succeed({ pet, hasOpenOrder: hasOpenOrder(id) })
  }

  const update = Spans.method("PetRepository.update", (id: PetId, patch: PetPatch, precondition: PetPrecondition) =>
    Effect.withFiber((fiber) =>
      Result.flatMap(stateOf(id), (state) => decideUpdate(state, patch, precondition)).pipe(
        Result.map((after) => {
          const before = pets.get(id)!
          const pet = pets.replace(after)
          record(fiber, "pet.updated", petUpdatedData(before, pet))
          return pet
        }),
        Effect.fromResult
      )
    )
  )

  const remove = Spans.method("PetRepository.delete", (id: PetId, precondition: PetPrecondition) =>
    Effect.withFiber((fiber) =>
      Result.flatMap(stateOf(id), (state) => decideDelete(state, precondition)).pipe(
        Result.map(() => {
          const pet = pets.get(id)!
          pets.retire(id)
          record(fiber, "pet.deleted", petData(pet))
        }),
        Effect.fromResult
      )
    )
  )

  const list = Spans.method("PetRepository.list", (query: PetQuery) => Effect.sync(() => pets.page(query)))

  const tags = Spans.method("PetRepository.tags", (query: TagQuery) => Effect.sync(() => pets.tags(query)))

  const inventory = Effect.sync(() => pets.inventory()).pipe(Spans.span("PetRepository.inventory"))

  return PetRepository.of({ create, get, update, delete: remove, list, tags, inventory, ready: Effect.void })
}

/** Builds an in-memory PetRepository with a store of its own. */
export const make: Effect.Effect<PetRepository["Service"]> = Effect.sync(() => fromTables(new PetTable(), new EventTable()))

/** A PetRepository that keeps pets in process memory; nothing survives a restart. */
export const layer: Layer.Layer<PetRepository> = Layer.effect(PetRepository, make)
