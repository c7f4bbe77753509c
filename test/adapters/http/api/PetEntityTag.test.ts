import { describe, expect, it } from "vitest"
import { etagOf, preconditionOf } from "../../../../src/adapters/http/api/PetEntityTag.ts"
import { PetVersion } from "../../../../src/domain/pets/PetVersion.ts"

describe("PetEntityTag", () => {
  it("writes a version as a strong entity tag", () => {
    expect(etagOf(PetVersion.make(12))).toBe(`"12"`)
  })

  it.each([
    [undefined, {}],
    ["*", {}],
    [` * `, {}],
    [`"3"`, { ifMatch: [3] }],
    [`"3", "9" ,"abc"`, { ifMatch: [3, 9] }],
    [`W/"3"`, { ifMatch: [] }],
    [`3`, { ifMatch: [] }],
    [`"0"`, { ifMatch: [] }],
    [`"1.5"`, { ifMatch: [] }],
    [`"9999999999999999"`, { ifMatch: [] }],
    [``, { ifMatch: [] }]
  ])("reads If-Match %j as %j", (header, expected) => {
    expect(preconditionOf(header)).toEqual(expected)
  })
})
