import { describe, expect, it } from "vitest"
import { fingerprintOf } from "../../../src/adapters/idempotency/RequestFingerprint.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { createPetIdentity, placeOrderIdentity } from "../../../src/domain/idempotency/IdempotentRequest.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"

describe("fingerprintOf", () => {
  it("is the hex SHA-256 of the identity, unchanged from the fingerprints answers are already kept under", () => {
    // Kept answers live 24 hours: a release that changed these would turn their retries into 422s.
    const rex = new NewPet({ name: PetName.make("Rex"), categoryId: CategoryId.make(9007199254740993n), status: "available" })
    expect(fingerprintOf(createPetIdentity(rex))).toBe("dec6904c881755cb0d3726a9aed78e086fb7bfe1f60c2d63bf0d6dec01ad3a1e")
    expect(fingerprintOf(placeOrderIdentity(PetId.make(9007199254740993n))))
      .toBe("48ed50535e1bbc39b3c485a76c2b9436729d9c540d29893fc7f9e8c0edf15167")
  })
})
