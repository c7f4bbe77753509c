import { Effect, Layer } from "effect"
import { PetNotFound } from "../../domain/Errors.ts"
import type { NewPet } from "../../domain/NewPet.ts"
import { Pet } from "../../domain/Pet.ts"
import { PetId } from "../../domain/PetId.ts"
import type { PetQuery } from "../../domain/PetQuery.ts"
import type { PetStatus } from "../../domain/PetStatus.ts"
import { PetRepository } from "../../ports/PetRepository.ts"

// Index of the first pet whose id is greater than `after`; `pets` is sorted by id.
const firstAfter = (pets: ReadonlyArray<Pet>, after: PetId | undefined): number => {
  if (after === undefined) return 0
  let lo = 0
  let hi = pets.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (pets[mid]!.id <= after) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Builds an in-memory PetRepository. Each method body runs synchronously inside
 * one Effect step, so concurrent fibers never observe a half-applied create.
 */
export const make = Effect.sync(() => {
  // Ids are assigned in increasing order and pets are only appended, so every array stays sorted by id.
  const all: Array<Pet> = []
  const byStatus = new Map<PetStatus, Array<Pet>>()
  const byId = new Map<bigint, Pet>()
  let lastId = 0n

  const create = Effect.fn("PetRepository.create")((input: NewPet) =>
    Effect.sync(() => {
      lastId += 1n
      const pet = new Pet({ ...input, id: PetId.make(lastId) })
      all.push(pet)
      byId.set(pet.id, pet)
      if (pet.status !== undefined) {
        const bucket = byStatus.get(pet.status)
        if (bucket === undefined) byStatus.set(pet.status, [pet])
        else bucket.push(pet)
      }
      return pet
    })
  )

  const get = Effect.fn("PetRepository.get")(function*(id: PetId) {
    const pet = byId.get(id)
    if (pet === undefined) return yield* new PetNotFound({ id })
    return pet
  })

  const list = Effect.fn("PetRepository.list")((query: PetQuery) =>
    Effect.sync(() => {
      const source = query.status === undefined ? all : byStatus.get(query.status) ?? []
      const start = firstAfter(source, query.after)
      return source.slice(start, start + query.limit)
    })
  )

  return PetRepository.of({ create, get, list, ready: Effect.void })
})

/** A PetRepository that keeps pets in process memory; nothing survives a restart. */
export const layer: Layer.Layer<PetRepository> = Layer.effect(PetRepository, make)
