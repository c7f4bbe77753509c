import { assert, describe, it } from "@effect/vitest"
import { Effect, Equal, Schema } from "effect"
import { Pet, trustedPet } from "../../../src/domain/pets/Pet.ts"

// The fields of any pet, as the schema makes them (optional fields present or not).
const PetFields = Schema.Struct(Pet.fields)

describe("trustedPet", () => {
  it.effect.prop("makes the Pet that new Pet makes: same keys in the same order, equal, a Pet", [PetFields], ([fields]) =>
    Effect.sync(() => {
      const made = new Pet(fields)
      const trusted = trustedPet(fields)
      assert.instanceOf(trusted, Pet)
      assert.deepStrictEqual(trusted, made)
      assert.deepStrictEqual(Reflect.ownKeys(trusted), Reflect.ownKeys(made))
      assert.isTrue(Equal.equals(trusted, made))
      assert.strictEqual(String(trusted), String(made))
    }))
})
