import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { PetChanged, PetHasOpenOrder } from "../../../src/domain/Errors.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { Pet } from "../../../src/domain/pets/Pet.ts"
import { decideDelete, decideUpdate } from "../../../src/domain/pets/PetChanges.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"
import { PetPatch } from "../../../src/domain/pets/PetPatch.ts"
import { PetVersion } from "../../../src/domain/pets/PetVersion.ts"

const pet = new Pet({
  id: PetId.make(7n),
  name: PetName.make("Rex"),
  categoryId: CategoryId.make(1n),
  status: "pending",
  version: PetVersion.make(3)
})
const v = PetVersion.make

describe("decideUpdate", () => {
  it("applies the fields named, removes the status on null, keeps the rest, one version on", () => {
    const renamed = decideUpdate({ pet, hasOpenOrder: false }, new PetPatch({ name: PetName.make("Tom") }), {})
    expect(Result.getOrThrow(renamed)).toEqual(new Pet({ ...pet, name: PetName.make("Tom"), version: v(4) }))
    const cleared = Result.getOrThrow(decideUpdate({ pet, hasOpenOrder: false }, new PetPatch({ status: null }), {}))
    expect("status" in cleared).toBe(false)
    expect(cleared.categoryId).toBe(pet.categoryId)
  })

  it("checks the precondition first: a version not named is PetChanged, even with an open order", () => {
    for (const ifMatch of [[], [v(2)], [v(4), v(5)]]) {
      const decided = decideUpdate({ pet, hasOpenOrder: true }, new PetPatch({ status: "sold" }), { ifMatch })
      expect(Result.isFailure(decided) && decided.failure).toBeInstanceOf(PetChanged)
    }
    expect(Result.isSuccess(decideUpdate({ pet, hasOpenOrder: false }, new PetPatch({}), { ifMatch: [v(1), v(3)] }))).toBe(true)
  })

  it("an open order refuses a patch that names the status, not one that leaves it alone", () => {
    for (const status of ["available", null] as const) {
      const decided = decideUpdate({ pet, hasOpenOrder: true }, new PetPatch({ status }), {})
      expect(Result.isFailure(decided) && decided.failure).toBeInstanceOf(PetHasOpenOrder)
    }
    expect(Result.isSuccess(decideUpdate({ pet, hasOpenOrder: true }, new PetPatch({ name: PetName.make("Tom") }), {}))).toBe(true)
  })
})

describe("decideDelete", () => {
  it("is refused by a stale precondition, then by an open order; allowed otherwise", () => {
    const stale = decideDelete({ pet, hasOpenOrder: true }, { ifMatch: [v(2)] })
    expect(Result.isFailure(stale) && stale.failure).toBeInstanceOf(PetChanged)
    const owned = decideDelete({ pet, hasOpenOrder: true }, { ifMatch: [v(3)] })
    expect(Result.isFailure(owned) && owned.failure).toBeInstanceOf(PetHasOpenOrder)
    expect(Result.isSuccess(decideDelete({ pet, hasOpenOrder: false }, {}))).toBe(true)
  })
})
