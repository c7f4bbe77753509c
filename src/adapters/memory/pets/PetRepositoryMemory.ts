import { Clock, DateTime, Effect, Layer } from "effect"
import { PetNotFound } from "../../../domain/Errors.ts"
import { petData } from "../../../domain/events/EventData.ts"
import type { NewPet } from "../../../domain/pets/NewPet.ts"
import type { PetId } from "../../../domain/pets/PetId.ts"
import type { PetQuery } from "../../../domain/pets/PetQuery.ts"
import { PetRepository } from "../../../ports/pets/PetRepository.ts"
import { EventTable } from "../events/EventTable.ts"
import { PetTable } from "./PetTable.ts"

/**
 * A PetRepository over `pets`, which an OrderRepository may share (see StoreMemory), that
 * records each change in `events`. Each method body runs synchronously inside one Effect
 * step, so concurrent fibers never observe a half-applied change, nor a change without
 * its event.
 */
export const fromTables = (pets: PetTable, events: EventTable): PetRepository["Service"] => {
  const create = Effect.fn("PetRepository.create")(function*(input: NewPet) {
    const clock = yield* Clock.Clock
    const pet = pets.insert(input)
    events.append("pet.created", petData(pet), DateTime.makeUnsafe(clock.currentTimeMillisUnsafe()))
    return pet
  })

  const get = Effect.fn("PetRepository.get")(function*(id: PetId) {
    const pet = pets.get(id)
    if (pet === undefined) return yield* new PetNotFound({ id })
    return pet
  })

  const list = Effect.fn("PetRepository.list")((query: PetQuery) => Effect.sync(() => pets.page(query)))

  const inventory = Effect.sync(() => pets.inventory()).pipe(Effect.withSpan("PetRepository.inventory"))

  return PetRepository.of({ create, get, list, inventory, ready: Effect.void })
}

/** Builds an in-memory PetRepository with a store of its own. */
export const make: Effect.Effect<PetRepository["Service"]> = Effect.sync(() => fromTables(new PetTable(), new EventTable()))

/** A PetRepository that keeps pets in process memory; nothing survives a restart. */
export const layer: Layer.Layer<PetRepository> = Layer.effect(PetRepository, make)
