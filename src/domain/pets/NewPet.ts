import { Effect, Schema } from "effect"
import { CategoryId } from "./CategoryId.ts"
import { PetName } from "./PetName.ts"
import { PetStatus } from "./PetStatus.ts"
import { PetTags } from "./PetTag.ts"

/**
 * What a client may supply to create a pet. `status` is optional and, when
 * omitted, stays omitted: the store invents no default. `tags` default to none.
 */
export class NewPet extends Schema.Class<NewPet>("NewPet")({
  name: PetName,
  categoryId: CategoryId,
  status: Schema.optionalKey(PetStatus),
  tags: PetTags.pipe(
    Schema.withDecodingDefaultKey(Effect.succeed([])),
    Schema.withConstructorDefault(Effect.succeed([]))
  )
}) {}
