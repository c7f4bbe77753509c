import type { Pet } from "../../../domain/pets/Pet.ts"

// Tags are slugs (a-z, 0-9, '-'): quoted as they are, with no escaping to do.
const tagsJson = (tags: ReadonlyArray<string>): string => tags.length === 0 ? "[]" : `["${tags.join('","')}"]`

/**
 * A pet as `PetJson` (PetsApi.ts) writes it, written by hand for speed: the schema's key order,
 * int64 fields with every digit. Written as text: a bigint's digits are already JSON, and
 * 40 `JSON.rawJSON` objects per page cost more. A property test pins that both write the
 * same bytes.
 */
export const petJson = (pet: Pet): string =>
  `{"id":${pet.id},"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId}${
    pet.status === undefined ? "" : `,"status":"${pet.status}"`
  },"tags":${tagsJson(pet.tags)},"version":${pet.version}}`

/** A page of pets as `PetsJson` writes it. */
export const petsJson = (pets: ReadonlyArray<Pet>): string => `[${pets.map(petJson).join(",")}]`
