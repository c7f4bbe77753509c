import { it as effectIt } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { etagOf, preconditionOf } from "../../../../src/adapters/http/api/PetEntityTag.ts"
import { PetVersion } from "../../../../src/domain/pets/PetVersion.ts"

const version1 = PetVersion.make(1)

/** A piece of a near-miss tag body: digits, leading zeros, signs, a dot, an exponent, a space. */
const piece = Arbitrary.schema(Schema.Literals(["0", "1", "7", "00", "+", "-", ".", "e", " ", "x"]))
/** A tag whose body is made of such pieces, maybe weak, maybe with spaces around it. */
const nearMissTag = Arbitrary.all([
  Arbitrary.schema(Schema.Literals(["", "", "W/", " "])),
  Arbitrary.array(piece, { minLength: 1, maxLength: 4 }),
  Arbitrary.schema(Schema.Literals(["", " "]))
]).pipe(Arbitrary.map(([before, body, after]) => `${before}"${body.join("")}"${after}`))
/** An If-Match list of one to three such tags. */
const nearMissHeader = Arbitrary.array(nearMissTag, { minLength: 1, maxLength: 3 }).pipe(
  Arbitrary.map((tags) => tags.join(","))
)

const tagsOf = (header: string) => header.split(",").map((tag) => tag.trim())
const isVersion = Schema.is(PetVersion)
/** The version whose ETag is exactly this tag, if any. */
const versionTagged = (tag: string): ReadonlyArray<PetVersion> => {
  const version = Number(tag.slice(1, -1))
  return isVersion(version) && etagOf(version) === tag ? [version] : []
}

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

  it.each([`"01"`, `"001"`, `"1 "`, `" 1"`, `"+1"`, `"1.0"`, `"1e0"`, `"0x1"`, `"1"1`, `W/"1"`, `"01", "02"`])(
    "never matches version 1 with %j: strong comparison is character by character",
    (header) => {
      expect(preconditionOf(header)).toEqual({ ifMatch: [] })
    }
  )

  it.each([`"1"`, ` "1" `, `"01", "1"`, `"abc","1","7"`])("matches version 1 with %j", (header) => {
    expect(preconditionOf(header).ifMatch).toContain(version1)
  })

  effectIt.prop("a version matches its own ETag", [PetVersion], ([version]) => {
    expect(preconditionOf(etagOf(version))).toEqual({ ifMatch: [version] })
  })

  effectIt.prop(
    "a version is read from a header if and only if the header names exactly its ETag",
    [nearMissHeader],
    ([header]) => {
      expect(preconditionOf(header)).toEqual({ ifMatch: tagsOf(header).flatMap(versionTagged) })
    },
    { arbitrary: { runs: 2000 } }
  )
})
