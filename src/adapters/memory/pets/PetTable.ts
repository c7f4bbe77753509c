import type { NewPet } from "../../../domain/pets/NewPet.ts"
import { Pet } from "../../../domain/pets/Pet.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import type { PetInventory } from "../../../domain/pets/PetInventory.ts"
import type { PetQuery } from "../../../domain/pets/PetQuery.ts"
import { PetStatus } from "../../../domain/pets/PetStatus.ts"
import { IdOrdered } from "../IdOrdered.ts"

/**
 * The pets of the in-memory store, with the indexes the queries need: by id, all in id
 * order, and per status in id order. Synchronous, so a caller that reads, decides and
 * writes in one call cannot be interleaved with another fiber.
 */
export class PetTable {
  readonly #byId = new Map<bigint, Pet>()
  readonly #all = new IdOrdered<Pet>()
  readonly #byStatus = new Map<PetStatus, IdOrdered<Pet>>(PetStatus.literals.map((status) => [status, new IdOrdered()]))
  #lastId = 0n

  /** Stores a new pet under the next id. */
  insert(input: NewPet): Pet {
    this.#lastId += 1n
    const pet = new Pet({ ...input, id: PetId.make(this.#lastId) })
    this.#byId.set(pet.id, pet)
    this.#all.add(pet)
    if (pet.status !== undefined) this.#byStatus.get(pet.status)!.add(pet)
    return pet
  }

  /** The pet with `id`, if any. */
  get(id: PetId): Pet | undefined {
    return this.#byId.get(id)
  }

  /** Gives the pet with `id` (which must exist) `status`, moving it between the status indexes. */
  setStatus(id: PetId, status: PetStatus): Pet {
    const before = this.#byId.get(id)
    if (before === undefined) throw new Error(`no pet ${id} to update`)
    const after = new Pet({ ...before, status }, { disableChecks: true })
    this.#byId.set(id, after)
    this.#all.replace(after)
    if (before.status === status) {
      this.#byStatus.get(status)!.replace(after)
    } else {
      if (before.status !== undefined) this.#byStatus.get(before.status)!.remove(id)
      this.#byStatus.get(status)!.add(after)
    }
    return after
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
