import { Effect, Layer, Result } from "effect"
import { PetNotFound } from "../../../domain/Errors.ts"
import type { NewPet } from "../../../domain/pets/NewPet.ts"
import { decideDelete, decideUpdate, type PetPrecondition, type PetState } from "../../../domain/pets/PetChanges.ts"
import type { PetPatch } from "../../../domain/pets/PetPatch.ts"
import type { PetId } from "../../../domain/pets/PetId.ts"
import type { PetQuery } from "../../../domain/pets/PetQuery.ts"
import { PetRepository } from "../../../ports/pets/PetRepository.ts"
import { PetTable } from "./PetTable.ts"

/**
 * A PetRepository over `pets`, which an OrderRepository may share (see StoreMemory), and
 * `hasOpenOrder`, what that OrderRepository's table says of a pet (no orders: never).
 * Each method body runs synchronously inside one Effect step, so concurrent fibers
 * never observe a half-applied change: `update` and `delete` read, decide and write
 * with no effect in between.
 */
export const fromTable = (
  pets: PetTable,
  hasOpenOrder: (id: PetId) => boolean = () => false
): PetRepository["Service"] => {
  const create = Effect.fn("PetRepository.create")((input: NewPet) => Effect.sync(() => pets.insert(input)))

  const get = Effect.fn("PetRepository.get")(function*(id: PetId) {
    const pet = pets.get(id)
    if (pet === undefined) return yield* new PetNotFound({ id })
    return pet
  })

  const stateOf = (id: PetId): Result.Result<PetState, PetNotFound> => {
    const pet = pets.get(id)
    return pet === undefined ? Result.fail(new PetNotFound({ id })) : Result.succeed({ pet, hasOpenOrder: hasOpenOrder(id) })
  }

  const update = Effect.fn("PetRepository.update")((id: PetId, patch: PetPatch, precondition: PetPrecondition) =>
    Effect.suspend(() =>
      Result.flatMap(stateOf(id), (state) => decideUpdate(state, patch, precondition)).pipe(
        Result.map((after) => pets.replace(after)),
        Effect.fromResult
      )
    )
  )

  const remove = Effect.fn("PetRepository.delete")((id: PetId, precondition: PetPrecondition) =>
    Effect.suspend(() =>
      Result.flatMap(stateOf(id), (state) => decideDelete(state, precondition)).pipe(
        Result.map(() => pets.retire(id)),
        Effect.fromResult
      )
    )
  )

  const list = Effect.fn("PetRepository.list")((query: PetQuery) => Effect.sync(() => pets.page(query)))

  const inventory = Effect.sync(() => pets.inventory()).pipe(Effect.withSpan("PetRepository.inventory"))

  return PetRepository.of({ create, get, update, delete: remove, list, inventory, ready: Effect.void })
}

/** Builds an in-memory PetRepository with a store of its own. */
export const make: Effect.Effect<PetRepository["Service"]> = Effect.sync(() => fromTable(new PetTable()))

/** A PetRepository that keeps pets in process memory; nothing survives a restart. */
export const layer: Layer.Layer<PetRepository> = Layer.effect(PetRepository, make)
