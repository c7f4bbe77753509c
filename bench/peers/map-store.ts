/**
 * In-memory PetStore for the Fastify peer: a Map by id plus id-ordered arrays (all pets,
 * and one per status) so a keyset page is a binary search and a slice.
 */
import { firstAfter } from "../keyset.ts"
import type { NewPet, PageQuery, Pet, PetStatus, PetStore } from "./pet-store.ts"

export const makeMapStore = (): PetStore => {
  const all: Array<Pet> = []
  const byId = new Map<bigint, Pet>()
  const byStatus = new Map<PetStatus, Array<Pet>>()
  let lastId = 0n

  const create = (pet: NewPet): Promise<Pet> => {
    lastId += 1n
    const stored: Pet = { ...pet, id: lastId }
    all.push(stored)
    byId.set(stored.id, stored)
    if (stored.status !== undefined) {
      const bucket = byStatus.get(stored.status)
      if (bucket === undefined) byStatus.set(stored.status, [stored])
      else bucket.push(stored)
    }
    return Promise.resolve(stored)
  }

  const list = (query: PageQuery): Promise<ReadonlyArray<Pet>> => {
    const source = query.status === undefined ? all : byStatus.get(query.status) ?? []
    const start = firstAfter(source, query.after)
    return Promise.resolve(source.slice(start, start + query.limit))
  }

  return {
    create,
    get: (id) => Promise.resolve(byId.get(id)),
    list,
    close: () => Promise.resolve()
  }
}
