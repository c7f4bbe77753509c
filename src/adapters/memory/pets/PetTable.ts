import type { NewPet } from "../../../domain/pets/NewPet.ts"
import { type Pet, trustedPet } from "../../../domain/pets/Pet.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import type { PetInventory } from "../../../domain/pets/PetInventory.ts"
import type { PetQuery } from "../../../domain/pets/PetQuery.ts"
import { PetStatus } from "../../../domain/pets/PetStatus.ts"
import { FIRST_VERSION, nextVersion } from "../../../domain/pets/PetVersion.ts"
import { IdOrdered } from "../IdOrdered.ts"

/**
 * The pets of the in-memory store, with the indexes the queries need: by id, all in id
 * order, and per status in id order. Synchronous, so a caller that reads, decides and
 * writes in one call cannot be interleaved with another fiber. A deleted pet leaves every
 * index and is kept aside, for the orders that name it.
 */
export class PetTable {
  readonly #byId = new Map<bigint, Pet>()
  readonly #all = new IdOrdered<Pet>()
  readonly #byStatus = new Map<PetStatus, IdOrdered<Pet>>(PetStatus.literals.map((status) => [status, new IdOrdered()]))
  readonly #retired = new Map<bigint, Pet>()
  #lastId = 0n

  /** Stores a new pet under the next id. */
  insert(input: NewPet): Pet {
    this.#lastId += 1n
    const pet = trustedPet({ ...input, id: PetId.make(this.#lastId), version: FIRST_VERSION })
    this.#byId.set(pet.id, pet)
    this.#all.add(pet)
    if (pet.status !== undefined) this.#byStatus.get(pet.status)!.add(pet)
    return pet
  }

  /** The pet with `id`, if any. */
  get(id: PetId): Pet | undefined {
    return this.#byId.get(id)
  }

  /** Gives the pet with `id` (which must exist) `status`, one version on. */
  setStatus(id: PetId, status: PetStatus): Pet {
    const before = this.#byId.get(id)
    if (before === undefined) throw new Error(`no pet ${id} to update`)
    return this.replace(trustedPet({ ...before, status, version: nextVersion(before.version) }))
  }

  /** Puts `after` in place of the pet with its id (which must exist), moving it between the status indexes. */
  replace(after: Pet): Pet {
    const before = this.#byId.get(after.id)
    if (before === undefined) throw new Error(`no pet ${after.id} to update`)
    this.#byId.set(after.id, after)
    this.#all.replace(after)
    if (before.status === after.status) {
      if (after.status !== undefined) this.#byStatus.get(after.status)!.replace(after)
    } else {
      if (before.status !== undefined) this.#byStatus.get(before.status)!.remove(after.id)
      if (after.status !== undefined) this.#byStatus.get(after.status)!.add(after)
    }
    return after
  }

  /** Takes the pet with `id` (which must exist) out of every index, one version on, and keeps it aside. */
  retire(id: PetId): void {
    const pet = this.#byId.get(id)
    if (pet === undefined) throw new Error(`no pet ${id} to delete`)
    this.#byId.delete(id)
    this.#all.remove(id)
    if (pet.status !== undefined) this.#byStatus.get(pet.status)!.remove(id)
    this.#retired.set(id, trustedPet({ ...pet, version: nextVersion(pet.version) }))
  }

  /** One keyset page, as PetRepository.list describes it. */
  page(query: PetQuery): Array<Pet> {
    const source = query.status === undefined ? this.#all : this.#byStatus.get(query.status)!
    return source.page(query.after, query.limit)
  }

  /** How many pets are in each status, from the sizes of the status indexes. */
  inventory(): PetInventory {
    const available = this.#byStatus.get("available")!.size
    const pending = this.#byStatus.get("pending")!.size
    const sold = this.#byStatus.get("sold")!.size
    return { available, pending, sold, none: this.#all.size - available - pending - sold }
  }
}
