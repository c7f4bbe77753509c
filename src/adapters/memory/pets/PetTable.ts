import type { NewPet } from "../../../domain/pets/NewPet.ts"
import { type Pet, trustedPet } from "../../../domain/pets/Pet.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import type { PetInventory } from "../../../domain/pets/PetInventory.ts"
import type { PetQuery, TagCount, TagQuery } from "../../../domain/pets/PetQuery.ts"
import { searchKey } from "../../../domain/pets/PetSearch.ts"
import { PetStatus } from "../../../domain/pets/PetStatus.ts"
import { FIRST_VERSION, nextVersion } from "../../../domain/pets/PetVersion.ts"
import { IdOrdered } from "../IdOrdered.ts"

// Index of the first of the ascending `sorted` that is greater than `value`.
const firstAfter = (sorted: ReadonlyArray<string>, value: string): number => {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! <= value) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The pets of the in-memory store, with the indexes the queries need: by id, all in id
 * order, per status and per tag in id order, each pet's search key (searchKey of its
 * name), and the tags in use in code point order. Synchronous, so a caller that reads,
 * decides and writes in one call cannot be interleaved with another fiber. A deleted pet
 * leaves every index and is kept aside, for the orders that name it.
 */
export class PetTable {
  readonly #byId = new Map<bigint, Pet>()
  readonly #all = new IdOrdered<Pet>()
  readonly #byStatus = new Map<PetStatus, IdOrdered<Pet>>(PetStatus.literals.map((status) => [status, new IdOrdered()]))
  // A tag's list is its count too; a tag no pet carries any more has none.
  readonly #byTag = new Map<string, IdOrdered<Pet>>()
  readonly #tagsInUse: Array<string> = []
  readonly #searchKeys = new Map<bigint, string>()
  readonly #retired = new Map<bigint, Pet>()
  #lastId = 0n

  /** Stores a new pet under the next id. */
  insert(input: NewPet): Pet {
    this.#lastId += 1n
    const pet = trustedPet({ ...input, id: PetId.make(this.#lastId), version: FIRST_VERSION })
    this.#byId.set(pet.id, pet)
    this.#all.add(pet)
    if (pet.status !== undefined) this.#byStatus.get(pet.status)!.add(pet)
    for (const tag of pet.tags) this.#tagList(tag).add(pet)
    this.#searchKeys.set(pet.id, searchKey(pet.name))
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

  /** Puts `after` in place of the pet with its id (which must exist), moving it between the status and tag indexes. */
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
    for (const tag of before.tags) if (!after.tags.includes(tag)) this.#untag(tag, after.id)
    for (const tag of after.tags) {
      if (before.tags.includes(tag)) this.#byTag.get(tag)!.replace(after)
      else this.#tagList(tag).add(after)
    }
    if (before.name !== after.name) this.#searchKeys.set(after.id, searchKey(after.name))
    return after
  }

  /** Takes the pet with `id` (which must exist) out of every index, one version on, and keeps it aside. */
  retire(id: PetId): void {
    const pet = this.#byId.get(id)
    if (pet === undefined) throw new Error(`no pet ${id} to delete`)
    this.#byId.delete(id)
    this.#all.remove(id)
    if (pet.status !== undefined) this.#byStatus.get(pet.status)!.remove(id)
    for (const tag of pet.tags) this.#untag(tag, id)
    this.#searchKeys.delete(id)
    this.#retired.set(id, trustedPet({ ...pet, version: nextVersion(pet.version) }))
  }

  /**
   * One keyset page, as PetRepository.list describes it. A tag filter walks the shortest
   * of its tags' lists, so it reads no pet without that tag; a search checks the pets of
   * the list it walks one by one (a scan, when nothing else narrows it).
   */
  page(query: PetQuery): Array<Pet> {
    const tags = query.tags ?? []
    let source = query.status === undefined ? this.#all : this.#byStatus.get(query.status)!
    if (tags.length > 0) {
      const lists = tags.map((tag) => this.#byTag.get(tag))
      if (lists.some((list) => list === undefined)) return []
      source = (lists as Array<IdOrdered<Pet>>).reduce((shortest, list) => list.size < shortest.size ? list : shortest)
    }
    const status = tags.length > 0 ? query.status : undefined
    const key = query.q === undefined ? undefined : searchKey(query.q)
    if (status === undefined && key === undefined && tags.length <= 1) return source.page(query.after, query.limit)
    return source.pageWhere(query.after, query.limit, (pet) =>
      (status === undefined || pet.status === status) &&
      tags.every((tag) => pet.tags.includes(tag)) &&
      (key === undefined || this.#searchKeys.get(pet.id)!.includes(key)))
  }

  /** A page of the tags in use, with the sizes of their lists. */
  tags(query: TagQuery): Array<TagCount> {
    const start = query.after === undefined ? 0 : firstAfter(this.#tagsInUse, query.after)
    return this.#tagsInUse.slice(start, start + query.limit).map((tag) => ({ tag, pets: this.#byTag.get(tag)!.size }))
  }

  /** How many pets are in each status, from the sizes of the status indexes. */
  inventory(): PetInventory {
    const available = this.#byStatus.get("available")!.size
    const pending = this.#byStatus.get("pending")!.size
    const sold = this.#byStatus.get("sold")!.size
    return { available, pending, sold, none: this.#all.size - available - pending - sold }
  }

  // The list of `tag`, made (and the tag put in use) on its first pet.
  #tagList(tag: string): IdOrdered<Pet> {
    let list = this.#byTag.get(tag)
    if (list === undefined) {
      list = new IdOrdered()
      this.#byTag.set(tag, list)
      this.#tagsInUse.splice(firstAfter(this.#tagsInUse, tag), 0, tag)
    }
    return list
  }

  #untag(tag: string, id: PetId): void {
    const list = this.#byTag.get(tag)!
    list.remove(id)
    if (list.size === 0) {
      this.#byTag.delete(tag)
      this.#tagsInUse.splice(firstAfter(this.#tagsInUse, tag) - 1, 1)
    }
  }
}
