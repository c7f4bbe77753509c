import { Schema } from "effect"
import { NewPet } from "./NewPet.ts"
import { PetId } from "./PetId.ts"
import { PetVersion } from "./PetVersion.ts"

/** A pet as stored: every field of NewPet plus the id the store assigned and its version. */
export class Pet extends Schema.Class<Pet>("Pet")({
  id: PetId,
  ...NewPet.fields,
  version: PetVersion
}) {}
