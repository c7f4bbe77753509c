import { Effect, Layer } from "effect"
import { PetNotFound } from "../../../domain/Errors.ts"
import type { NewPet } from "../../../domain/pets/NewPet.ts"
import type { PetId } from "../../../domain/pets/PetId.ts"
import type { PetQuery } from "../../../domain/pets/PetQuery.ts"
import { PetRepository } from "../../../ports/pets/PetRepository.ts"
import { PetTable } from "./PetTable.ts"
import * as Spans from "../../observability/Spans.ts"

/**
 * A PetRepository over `pets`, which an OrderRepository may share (see StoreMemory).
 * Each method body runs synchronously inside one Effect step, so concurrent fibers
 * never observe a half-applied change.
 */
export const fromTable = (pets: PetTable): PetRepository["Service"] => {
  const create = Spans.method("PetRepository.create", (input: NewPet) => Effect.sync(() => pets.insert(input)))

  const get = Spans.method("PetRepository.get", (id: PetId) => {
    const pet = pets.get(id)
    return pet === undefined ? Effect.fail(new PetNotFound({ id })) : Effect.succeed(pet)
  })

  const list = Spans.method("PetRepository.list", (query: PetQuery) => Effect.sync(() => pets.page(query)))

  const inventory = Effect.sync(() => pets.inventory()).pipe(Spans.span("PetRepository.inventory"))

  return PetRepository.of({ create, get, list, inventory, ready: Effect.void })
}

/** Builds an in-memory PetRepository with a store of its own. */
export const make: Effect.Effect<PetRepository["Service"]> = Effect.sync(() => fromTable(new PetTable()))

/** A PetRepository that keeps pets in process memory; nothing survives a restart. */
export const layer: Layer.Layer<PetRepository> = Layer.effect(PetRepository, make)
