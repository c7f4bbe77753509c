import { Schema } from "effect"
import { NewPet } from "./NewPet.ts"
import { type Pet, trustedPet } from "./Pet.ts"
import { PetStatus } from "./PetStatus.ts"
import { PetTags } from "./PetTag.ts"
import { nextVersion } from "./PetVersion.ts"

/**
 * A JSON Merge Patch (RFC 7396) of a pet: each field present replaces the pet's, with
 * the rules of a create (NewPet's own schemas); `status: null` removes the status. A
 * field absent stays as it is. `tags` replaces the whole list (`[]` removes every tag).
 */
export class PetPatch extends Schema.Class<PetPatch>("PetPatch")({
  name: Schema.optionalKey(NewPet.fields.name),
  categoryId: Schema.optionalKey(NewPet.fields.categoryId),
  status: Schema.optionalKey(Schema.NullOr(PetStatus)),
  tags: Schema.optionalKey(PetTags)
}) {}

/** Whether the patch sets or removes the status (which orders own while one is open). */
export const touchesStatus = (patch: PetPatch): boolean => patch.status !== undefined

/** The pet after `patch`, one version on. */
export const applyPatch = (pet: Pet, patch: PetPatch): Pet => {
  const status = patch.status === undefined ? pet.status : patch.status ?? undefined
  return trustedPet({
    id: pet.id,
    name: patch.name ?? pet.name,
    categoryId: patch.categoryId ?? pet.categoryId,
    ...(status === undefined ? {} : { status }),
    tags: patch.tags ?? pet.tags,
    version: nextVersion(pet.version)
  })
}
