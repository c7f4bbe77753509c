import { Schema } from "effect"
import { CategoryId } from "./CategoryId.ts"
import { PetName } from "./PetName.ts"
import { PetStatus } from "./PetStatus.ts"

/**
 * What a client may supply to create a pet. `status` is optional and, when
 * omitted, stays omitted: the store invents no default.
 */
export class NewPet extends Schema.Class<NewPet>("NewPet")({
  name: PetName,
  categoryId: CategoryId,
  status: Schema.optionalKey(PetStatus)
}) {}
