import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { HttpApiEndpoint } from "effect/http-api"
import { Api } from "../../../../src/adapters/http/api/Api.ts"
import { LosslessJsonBody } from "../../../../src/adapters/http/api/JsonInt64.ts"
import { petJson, petsJson } from "../../../../src/adapters/http/api/PetJsonText.ts"
import { PetsJson } from "../../../../src/adapters/http/api/PetsApi.ts"
import { Pet } from "../../../../src/domain/Pet.ts"

const text = new TextDecoder()

// The bytes the Api writes: getPet's success schema, and the lossless body of a page.
const getPetSuccess = HttpApiEndpoint.getSuccessSchemas(Api.groups.animals.endpoints.getPet)[0]!
const encodePet = Schema.encodeSync(getPetSuccess as unknown as Schema.Encoder<Uint8Array, Pet>)
const encodePets = Schema.encodeSync(LosslessJsonBody(PetsJson) as unknown as Schema.Encoder<Uint8Array, ReadonlyArray<Pet>>)

describe("petJson, the hand-written encoder of PetJson", () => {
  it.prop("writes the bytes of the Api's own encoding of a pet", [Pet], ([pet]) => {
    assert.strictEqual(petJson(pet), text.decode(encodePet(pet)))
  }, { arbitrary: { runs: 500 } })

  it.prop("writes the bytes of the Api's own encoding of a page", [Schema.Array(Pet)], ([pets]) => {
    assert.strictEqual(petsJson(pets), text.decode(encodePets(pets)))
  }, { arbitrary: { runs: 200 } })
})
