import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { LosslessJsonBody } from "../../../../src/adapters/http/api/JsonInt64.ts"
import { petJson, petsJson } from "../../../../src/adapters/http/api/PetJsonText.ts"
import { PetJson, PetsJson } from "../../../../src/adapters/http/api/PetsApi.ts"
import { Pet } from "../../../../src/domain/pets/Pet.ts"

const text = new TextDecoder()

// The bytes the Api writes: the bodies of getPet and listPets, through the lossless JSON codec.
const encodePet = Schema.encodeSync(LosslessJsonBody(PetJson))
const encodePets = Schema.encodeSync(LosslessJsonBody(PetsJson))

describe("petJson, the hand-written encoder of PetJson", () => {
  it.prop("writes the bytes of the Api's own encoding of a pet", [Pet], ([pet]) => {
    assert.strictEqual(petJson(pet), text.decode(encodePet(pet)))
  }, { arbitrary: { runs: 500 } })

  it.prop("writes the bytes of the Api's own encoding of a page", [Schema.Array(Pet)], ([pets]) => {
    assert.strictEqual(petsJson(pets), text.decode(encodePets(pets)))
  }, { arbitrary: { runs: 200 } })
})
