/**
 * Request generators for the HTTP fuzz tests (Fuzz.test.ts): valid traffic derived from the
 * domain and wire schemas, and hostile variants of it. Each request carries what the
 * documented behaviour says must come of it, so that the properties check outcomes, not
 * only the absence of crashes.
 *
 * A request is data (a recipe), not bytes: the shrunk case a failure prints stays short even
 * when its body is 100,000 `[`. {@link bodyBytes} and {@link headerRecord} turn it into what
 * the harness sends.
 */
import { Arbitrary, Schema } from "effect"
import { MAX_BODY_VALUES } from "../../../src/adapters/http/api/PetsApi.ts"
import { CursorParam, LimitParam } from "../../../src/adapters/http/api/PathAndQuery.ts"
import { MAX_BODY_BYTES } from "../../../src/adapters/http/server/policies/ErrorResponses.ts"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { INT64_MAX, INT64_MIN } from "../../../src/domain/Int64.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetPatch } from "../../../src/domain/pets/PetPatch.ts"
import { PET_NAME_MAX_CODE_POINTS, PetName } from "../../../src/domain/pets/PetName.ts"
import { PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from "../../../src/domain/paging/PageLimit.ts"
import { PetStatus } from "../../../src/domain/pets/PetStatus.ts"
import { API_KEY } from "./TestServer.ts"

/** A part of a body: text (sent as UTF-8), a run of one text, or exact bytes. */
export type BodyPiece =
  | string
  | { readonly repeat: string; readonly times: number }
  | { readonly bytes: ReadonlyArray<number> }

/** The fields of a pet a create should store. */
export interface ExpectedPet {
  readonly name: string
  readonly categoryId: bigint
  readonly status?: PetStatus
  /** Absent: none, `[]`. */
  readonly tags?: ReadonlyArray<string>
}

/**
 * What the documented behaviour says a request must lead to, given the store at that moment:
 * - `created`: 201 storing exactly `pet`;
 * - `listed`: 200 with the page the store holds for that query;
 * - `fetched`: 200 with the pet when it exists, else 404 (410 from the sunset);
 * - `patched`: 200 with the pet after the patch when it exists, else 404;
 * - `deleted`: 204 when the pet exists, else 404;
 * - `refused`: an error status, nothing stored;
 * - `any`: only the invariants every response obeys.
 */
export type Expectation =
  | { readonly kind: "created"; readonly pet: ExpectedPet }
  | {
    readonly kind: "listed"
    readonly limit: number
    readonly status: PetStatus | undefined
    readonly after: bigint | undefined
  }
  | { readonly kind: "fetched"; readonly id: bigint }
  | { readonly kind: "patched"; readonly id: bigint }
  | { readonly kind: "deleted"; readonly id: bigint }
  | { readonly kind: "refused" }
  | { readonly kind: "any" }

export interface FuzzRequest {
  readonly method: string
  /** Path and query, as given to `new Request`, which normalizes it the way a client's URL parser would. */
  readonly target: string
  /** In order; a repeated name is sent as one comma-joined field, as Fetch `Headers` does. */
  readonly headers: ReadonlyArray<readonly [name: string, value: string]>
  readonly body: ReadonlyArray<BodyPiece> | undefined
  readonly expect: Expectation
}

// ---------------------------------------------------------------------------------------------
// Combinators the Arbitrary module leaves out

const between = (minimum: number, maximum: number): Arbitrary.Arbitrary<number> =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

/** One of `choices`; shrinks towards the first. */
const oneOf = <A>(choices: ReadonlyArray<Arbitrary.Arbitrary<A>>): Arbitrary.Arbitrary<A> =>
  Arbitrary.flatMap(between(0, choices.length - 1), (index) => choices[index]!)

/** One of `values`; shrinks towards the first. */
const elementOf = <A>(values: ReadonlyArray<A>): Arbitrary.Arbitrary<A> =>
  Arbitrary.map(between(0, values.length - 1), (index) => values[index]!)

const optional = <A>(arbitrary: Arbitrary.Arbitrary<A>): Arbitrary.Arbitrary<A | undefined> =>
  oneOf<A | undefined>([Arbitrary.Constant(undefined), arbitrary])

// ---------------------------------------------------------------------------------------------
// Rendering

const utf8 = new TextEncoder()

/** The exact bytes of a body. */
export const bodyBytes = (pieces: ReadonlyArray<BodyPiece>): Uint8Array => {
  const parts = pieces.map((piece) =>
    typeof piece === "string"
      ? utf8.encode(piece)
      : "repeat" in piece
      ? utf8.encode(piece.repeat.repeat(piece.times))
      : Uint8Array.from(piece.bytes)
  )
  const bytes = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let offset = 0
  for (const part of parts) {
    bytes.set(part, offset)
    offset += part.length
  }
  return bytes
}

/** Header fields as Fetch `Headers` would hold them: names lowercased, repeats joined with ", ". */
export const headerRecord = (headers: FuzzRequest["headers"]): Record<string, string> => {
  const record: Record<string, string> = {}
  for (const [name, value] of headers) {
    const key = name.toLowerCase()
    record[key] = Object.hasOwn(record, key) ? `${record[key]}, ${value}` : value
  }
  return record
}

/** GET and HEAD requests cannot carry a body in Fetch (nor, meaningfully, in HTTP). */
const bodyAllowed = (method: string) => !["GET", "HEAD"].includes(method.toUpperCase())

// ---------------------------------------------------------------------------------------------
// Values, valid and not, labelled by the domain schemas themselves

const isPetName = Schema.is(PetName)
const isCategoryId = Schema.is(CategoryId)

// Characters the README singles out: blanks, NEL, zero-width space, BOM, combining marks, RTL, astral.
const UnicodeName = Arbitrary.schema(
  Schema.String.check(
    Schema.isPattern(/^[a-zA-Z0-9 \t\u00a0\u0085\u00e9\u0301\u05d0\u200b\u202e\u3000\ufeff\u{1F600}\u{10FFFF}]{1,12}$/u)
  )
)

const EDGE_NAMES = [
  "",
  " ",
  "\t\n\u3000",
  "\u0000",
  "Rex\u0000",
  "\u001f",
  "Rex\u001b[31m",
  "\u007f",
  "\u0085",
  "\u200b",
  "\ufeff",
  "\ud800",
  "a\udfff",
  "\udc00\ud800",
  "x".repeat(PET_NAME_MAX_CODE_POINTS),
  "x".repeat(PET_NAME_MAX_CODE_POINTS + 1),
  "😀".repeat(PET_NAME_MAX_CODE_POINTS),
  "😀".repeat(PET_NAME_MAX_CODE_POINTS + 1),
  "__proto__",
  "constructor",
  "at Object.<anonymous> (/work/src/x.ts:1:2)",
  "Error: SchemaError _tag node_modules"
] as const

/** Any string, valid as a name or not. */
const NameCandidate: Arbitrary.Arbitrary<string> = oneOf([
  Arbitrary.schema(Schema.String),
  UnicodeName,
  elementOf(EDGE_NAMES)
])

/** Names the domain accepts: schema-derived ones, and unicode ones the schema keeps. */
const ValidName: Arbitrary.Arbitrary<string> = oneOf([
  Arbitrary.schema(PetName),
  Arbitrary.filter(UnicodeName, isPetName),
  Arbitrary.filter(elementOf(EDGE_NAMES), isPetName)
])

const BIGINT_EDGES = [0n, 1n, -1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, INT64_MAX, INT64_MIN]
const BEYOND_INT64 = [INT64_MAX + 1n, INT64_MIN - 1n, 2n ** 64n, -(2n ** 64n), 10n ** 30n, 10n ** 400n, -(10n ** 400n)]

const ValidCategoryId: Arbitrary.Arbitrary<bigint> = oneOf([
  Arbitrary.schema(CategoryId),
  elementOf(BIGINT_EDGES)
])

const ValidStatus = optional(Arbitrary.schema(PetStatus))

/** A create the domain accepts: NewPet's own schema, plus names and ids it leaves rare. */
const ValidPet: Arbitrary.Arbitrary<ExpectedPet> = oneOf([
  Arbitrary.map(Arbitrary.schema(NewPet), (pet): ExpectedPet => ({ ...pet })),
  Arbitrary.map(
    Arbitrary.all([ValidName, ValidCategoryId, ValidStatus]),
    ([name, categoryId, status]): ExpectedPet =>
      status === undefined ? { name, categoryId } : { name, categoryId, status }
  )
])

// ---------------------------------------------------------------------------------------------
// JSON text of a create body

type Member = readonly [key: string, value: string]

const hex4 = (unit: number) => `\\u${unit.toString(16).padStart(4, "0")}`

/** Three spellings of one JSON string: plain, non-ASCII escaped, every unit escaped. */
const stringLiteral = (s: string, style: number): string => {
  const plain = JSON.stringify(s)
  if (style === 0) return plain
  if (style === 1) return plain.replace(/[\u007f-\uffff]/g, (c) => hex4(c.charCodeAt(0)))
  return `"${Array.from({ length: s.length }, (_, i) => hex4(s.charCodeAt(i))).join("")}"`
}

const objectText = (members: ReadonlyArray<Member>, ws: string) =>
  `{${ws}${members.map(([key, value]) => `${key}${ws}:${ws}${value}`).join(`${ws},${ws}`)}${ws}}`

/** Fields a create may carry besides its own: the README says they are ignored. */
const IGNORED_MEMBERS: ReadonlyArray<Member> = [
  [`"id"`, "7"],
  [`"id"`, "1e400"],
  [`"__proto__"`, `{"name":5,"categoryId":"x","status":"lost"}`],
  [`"constructor"`, `{"prototype":{"polluted":true}}`],
  [`"toString"`, "1"],
  [`"category"`, `{"id":1,"name":"Dogs"}`],
  [`""`, `""`]
]

const WHITESPACE = ["", " ", "\n  ", "\t", "\r\n"] as const

interface PetText {
  readonly pet: ExpectedPet
  readonly members: ReadonlyArray<Member>
  readonly ws: string
}

/** The members of a valid create, spelled in one of several equivalent ways, in some order. */
const PetTextArb: Arbitrary.Arbitrary<PetText> = Arbitrary.map(
  Arbitrary.all([
    ValidPet,
    between(0, 2),
    Arbitrary.schema(Schema.Boolean),
    Arbitrary.array(elementOf(IGNORED_MEMBERS), { maxLength: 3 }),
    between(0, 5),
    elementOf(WHITESPACE)
  ]),
  ([pet, style, escapeKeys, extras, rotation, ws]) => {
    const key = (name: string) => escapeKeys ? stringLiteral(name, 2) : JSON.stringify(name)
    const own: Array<Member> = [
      [key("name"), stringLiteral(pet.name, style)],
      [key("categoryId"), pet.categoryId.toString()]
    ]
    if (pet.status !== undefined) own.push([key("status"), JSON.stringify(pet.status)])
    if (pet.tags !== undefined) own.push([key("tags"), JSON.stringify(pet.tags)])
    // Repeated keys are duplicateKey's business; here every key is unique, so the parsed
    // document holds exactly the values its text does.
    const unique = extras.filter(([k], i) => extras.findIndex(([other]) => other === k) === i)
    const all = [...own, ...unique]
    const shift = rotation % all.length
    return { pet, members: [...all.slice(shift), ...all.slice(0, shift)], ws }
  }
)

/** JSON values in a parsed document, containers included: what the server bounds. */
const countValues = (value: unknown): number =>
  typeof value === "object" && value !== null
    ? Object.values(value).reduce<number>((n, v) => n + countValues(v), 1)
    : 1

/**
 * `created` when the text is within the documented bounds (bytes and JSON values), else
 * `refused`. `text` must be valid JSON for a create of `pet`.
 */
const withinBounds = (pieces: ReadonlyArray<BodyPiece>, pet: ExpectedPet, text: string): Expectation =>
  bodyBytes(pieces).length <= MAX_BODY_BYTES && countValues(JSON.parse(text)) <= MAX_BODY_VALUES
    ? { kind: "created", pet }
    : { kind: "refused" }

interface BodyCase {
  readonly body: ReadonlyArray<BodyPiece>
  readonly expect: Expectation
}

const validBody = ({ pet, members, ws }: PetText): BodyCase => {
  const text = objectText(members, ws)
  return { body: [text], expect: withinBounds([text], pet, text) }
}

// ---------------------------------------------------------------------------------------------
// Hostile bodies

const REFUSED: Expectation = { kind: "refused" }
const ANY: Expectation = { kind: "any" }

const replaceMember = (members: ReadonlyArray<Member>, field: string, value: string | undefined) =>
  members.flatMap(([key, v]): Array<Member> =>
    JSON.parse(key) !== field ? [[key, v]] : value === undefined ? [] : [[key, value]]
  )

/** The name replaced by any string: created exactly when the domain accepts the string. */
const hostileName = Arbitrary.map(
  Arbitrary.all([PetTextArb, NameCandidate, between(0, 2)]),
  ([text, name, style]): BodyCase => {
    const body = objectText(replaceMember(text.members, "name", stringLiteral(name, style)), text.ws)
    return {
      body: [body],
      expect: isPetName(name) ? withinBounds([body], { ...text.pet, name }, body) : REFUSED
    }
  }
)

// Tag lists as JSON text, each with the tags a create stores, or undefined where it must be refused.
const TAG_LISTS: ReadonlyArray<readonly [text: string, tags: ReadonlyArray<string> | undefined]> = [
  [`[]`, []],
  [`["cat","young","0-9"]`, ["cat", "young", "0-9"]],
  [JSON.stringify(Array.from({ length: 10 }, (_, i) => `t${i}`)), Array.from({ length: 10 }, (_, i) => `t${i}`)],
  [`["${"a".repeat(32)}"]`, ["a".repeat(32)]],
  [`["\\u0063at"]`, ["cat"]],
  [JSON.stringify(Array.from({ length: 11 }, (_, i) => `t${i}`)), undefined],
  [`["${"a".repeat(33)}"]`, undefined],
  [`["Cat"]`, undefined],
  [`["cat","cat"]`, undefined],
  [`["-cat"]`, undefined],
  [`[""]`, undefined],
  [`["caté"]`, undefined],
  [`["ca t"]`, undefined],
  [`["cat\\u0000"]`, undefined],
  [`["\\ud800"]`, undefined],
  [`["a",1,null,{"b":[]}]`, undefined],
  [`"cat"`, undefined],
  [`null`, undefined],
  [`{"0":"cat"}`, undefined]
]

/** The tags replaced by a list, valid or not: created exactly when the domain accepts it. */
const hostileTags = Arbitrary.map(
  Arbitrary.all([PetTextArb, elementOf(TAG_LISTS)]),
  ([text, [list, tags]]): BodyCase => {
    const body = objectText([...replaceMember(text.members, "tags", undefined), [`"tags"`, list]], text.ws)
    return { body: [body], expect: tags === undefined ? REFUSED : withinBounds([body], { ...text.pet, tags }, body) }
  }
)

/** The category id replaced by any integer: created exactly when it is within int64. */
const hostileCategoryInteger = Arbitrary.map(
  Arbitrary.all([PetTextArb, oneOf([elementOf(BEYOND_INT64), ValidCategoryId])]),
  ([text, categoryId]): BodyCase => {
    const body = objectText(replaceMember(text.members, "categoryId", categoryId.toString()), text.ws)
    return {
      body: [body],
      expect: isCategoryId(categoryId) ? withinBounds([body], { ...text.pet, categoryId }, body) : REFUSED
    }
  }
)

// Values of the wrong type or form, each refused by the documented rules (or not JSON at all).
const NOT_A_NAME = ["5", "null", "true", "[]", "{}", `["Rex"]`, `{"first":"Rex"}`]
const NOT_AN_INT64 = [
  "1.5",
  "1.0",
  "1e3",
  "1E+3",
  "1e400",
  "-1e400",
  "0.0",
  "-0.0",
  "9007199254740993.0",
  `"12"`,
  "null",
  "true",
  "[1]",
  "{}",
  "01",
  "+1",
  "0x10",
  ".5",
  "NaN",
  "Infinity",
  "1_000"
]
const NOT_A_STATUS = [`"AVAILABLE"`, `""`, `" sold"`, `"sold\\u0000"`, "null", "1", `["sold"]`, `{"status":"sold"}`]

const wrongValue = Arbitrary.map(
  Arbitrary.all([
    PetTextArb,
    oneOf<readonly [string, string | undefined]>([
      Arbitrary.map(elementOf(NOT_A_NAME), (v) => ["name", v] as const),
      Arbitrary.map(elementOf(NOT_AN_INT64), (v) => ["categoryId", v] as const),
      Arbitrary.map(elementOf(NOT_A_STATUS), (v) => ["status", v] as const),
      elementOf([["name", undefined], ["categoryId", undefined]] as const)
    ])
  ]),
  ([text, [field, value]]): BodyCase => {
    const members = text.members.some(([key]) => JSON.parse(key) === field)
      ? replaceMember(text.members, field, value)
      : value === undefined
      ? text.members
      : [...text.members, [JSON.stringify(field), value] as const]
    return { body: [objectText(members, text.ws)], expect: REFUSED }
  }
)

/** `-0` is an integer literal equal to 0; JSON allows it, the README does not say. */
const negativeZero = Arbitrary.map(PetTextArb, (text): BodyCase => ({
  body: [objectText(replaceMember(text.members, "categoryId", "-0"), text.ws)],
  expect: ANY
}))

/** A field given twice; which one wins is not documented. */
const duplicateKey = Arbitrary.map(
  Arbitrary.all([
    PetTextArb,
    elementOf(["name", "categoryId", "status"]),
    elementOf([`"Tom"`, "2", `"sold"`, "null", "1.5"]),
    Arbitrary.schema(Schema.Boolean)
  ]),
  ([text, field, value, first]): BodyCase => {
    const extra: Member = [JSON.stringify(field), value]
    return {
      body: [objectText(first ? [extra, ...text.members] : [...text.members, extra], text.ws)],
      expect: ANY
    }
  }
)

/** Valid text cut anywhere before its closing brace: never valid JSON. */
const truncated = Arbitrary.map(
  Arbitrary.all([PetTextArb, between(0, 10_000)]),
  ([text, at]): BodyCase => {
    const full = objectText(text.members, text.ws)
    return { body: [full.slice(0, at % full.lastIndexOf("}"))], expect: REFUSED }
  }
)

/** Something after the document: whitespace is allowed, anything else is not JSON. */
const trailing = Arbitrary.map(
  Arbitrary.all([PetTextArb, elementOf([" \n\t", "x", "}", ",", "{}", "\u0000", "//", "/* */", "\ufeff"])]),
  ([text, tail]): BodyCase => {
    const full = objectText(text.members, text.ws)
    return /^[ \t\n\r]*$/.test(tail)
      ? { body: [full + tail], expect: withinBounds([full + tail], text.pet, full) }
      : { body: [full + tail], expect: REFUSED }
  }
)

/** Documents that are JSON but not an object, or not JSON, or empty. */
const notAnObject = Arbitrary.map(
  Arbitrary.all([
    PetTextArb,
    elementOf([
      (o: string) => `[${o}]`,
      (o: string) => JSON.stringify(o),
      () => "1",
      () => "null",
      () => "true",
      () => "{}",
      () => "[]",
      () => "",
      () => " \r\n\t ",
      (o: string) => o.replaceAll(`"`, "'"),
      (o: string) => o.replace(/\}$/, ",}"),
      (o: string) => `// pet\n${o}`,
      (_: string, text: PetText) => objectText(text.members.map(([key, value]) => [JSON.parse(key), value]), text.ws)
    ])
  ]),
  ([text, wrap]): BodyCase => ({ body: [wrap(objectText(text.members, text.ws), text)], expect: REFUSED })
)

/** Invalid UTF-8 and raw control characters inside the name string. */
const INVALID_UTF8 = [[0xff], [0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80], [
  0xf8,
  0x88,
  0x80,
  0x80,
  0x80
]]
const badBytesInName = Arbitrary.map(
  Arbitrary.all([
    ValidPet,
    oneOf<ReadonlyArray<number>>([elementOf(INVALID_UTF8), elementOf([[0x00], [0x0a], [0x1f], [0x09]])])
  ]),
  ([pet, bytes]): BodyCase => ({
    body: [`{"name":"${pet.name.replace(/["\\\u0000-\u001f]/g, "")}`, { bytes }, `x","categoryId":${pet.categoryId}}`],
    expect: REFUSED
  })
)

/** Encodings other than UTF-8, and a byte order mark (tolerated or not: undocumented). */
const otherEncodings = Arbitrary.map(
  Arbitrary.all([PetTextArb, elementOf(["utf16le", "utf16be", "bom"] as const)]),
  ([text, encoding]): BodyCase => {
    const full = objectText(text.members, text.ws)
    if (encoding === "bom") return { body: ["\ufeff", full], expect: ANY }
    const le = Array.from(Buffer.from(full, "utf16le"))
    const bytes = encoding === "utf16le" ? le : le.map((_, i) => le[i ^ 1]!)
    return { body: [{ bytes }], expect: REFUSED }
  }
)

const NESTING_DEPTHS = [100_000, MAX_BODY_BYTES + 1, MAX_BODY_VALUES + 1, MAX_BODY_VALUES, MAX_BODY_VALUES - 4, 20]

/** Deep nesting, open or closed, at the root. */
const deepRoot = Arbitrary.map(
  Arbitrary.all([elementOf(NESTING_DEPTHS), elementOf(["[", `{"a":`, "[1,"]), Arbitrary.schema(Schema.Boolean)]),
  ([depth, open, closed]): BodyCase => ({
    body: [{ repeat: open, times: depth }, ...(closed ? [{ repeat: open === "[" ? "]" : "}", times: depth }] : [])],
    expect: REFUSED
  })
)

/**
 * A valid create carrying a nested or wide ignored field, or padding: created exactly while
 * the body stays within the byte and value bounds, whose edges these sizes straddle.
 */
const nearTheBounds = Arbitrary.map(
  Arbitrary.all([
    PetTextArb,
    elementOf(["nested", "wide", "padded", "long"] as const),
    elementOf([-1, 0, 1, -50, 50])
  ]),
  ([text, shape, offset]): BodyCase => {
    const base = objectText(text.members, "")
    const baseBytes = bodyBytes([base]).length
    const baseValues = countValues(JSON.parse(base))
    const open = `${base.slice(0, -1)},"x":`
    let body: ReadonlyArray<BodyPiece>
    switch (shape) {
      case "nested": {
        // Each "[" is one more value.
        const depth = Math.max(1, MAX_BODY_VALUES - baseValues + offset)
        body = [open, { repeat: "[", times: depth }, { repeat: "]", times: depth }, "}"]
        break
      }
      case "wide": {
        const items = Math.max(1, MAX_BODY_VALUES - baseValues - 1 + offset)
        body = [open, "[1", { repeat: ",1", times: items - 1 }, "]}"]
        break
      }
      case "padded":
        body = [base, { repeat: " ", times: Math.max(0, MAX_BODY_BYTES - baseBytes + offset) }]
        break
      case "long":
        body = [open, `"`, { repeat: "x", times: Math.max(0, MAX_BODY_BYTES - baseBytes - 7 + offset) }, `"}`]
    }
    return { body, expect: withinBounds(body, text.pet, new TextDecoder().decode(bodyBytes(body))) }
  }
)

/** Create bodies that break the JSON, UTF-8, size or field rules, or sit right at their edges. */
const HostileCreateBody: Arbitrary.Arbitrary<BodyCase> = oneOf([
  Arbitrary.map(PetTextArb, validBody),
  hostileName,
  hostileTags,
  hostileCategoryInteger,
  wrongValue,
  negativeZero,
  duplicateKey,
  truncated,
  trailing,
  notAnObject,
  badBytesInName,
  otherEncodings,
  deepRoot,
  nearTheBounds
])

// ---------------------------------------------------------------------------------------------
// Valid traffic

const BEARER_SPELLINGS = ["Bearer", "bearer", "BEARER", "BeArEr", "Bearer  ", "bEARER   "]

/** The accepted key under the scheme spellings the README and RFC 9110 allow. */
const ValidAuthorization = Arbitrary.map(elementOf(BEARER_SPELLINGS), (scheme) => `${scheme} ${API_KEY}`)

const JSON_CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "Application/JSON",
  "application/json;charset=UTF-8",
  "application/json ; charset=utf-8",
  "application/json;"
]
const ValidContentType = elementOf(JSON_CONTENT_TYPES)

/** Small ids mostly, so gets and cursors meet the pets a case stores. */
const IdNumber: Arbitrary.Arbitrary<bigint> = oneOf([
  Arbitrary.map(between(0, 8), BigInt),
  Arbitrary.schema(PetId)
])

const encodeCursor = Schema.encodeSync(CursorParam)
const encodeLimit = Schema.encodeSync(LimitParam)

const validCreate = Arbitrary.map(
  Arbitrary.all([PetTextArb, ValidAuthorization, ValidContentType]),
  ([text, authorization, contentType]): FuzzRequest => {
    const { body, expect } = validBody(text)
    return {
      method: "POST",
      target: "/v1/pets",
      headers: [["authorization", authorization], ["content-type", contentType]],
      body,
      expect
    }
  }
)

const validList = Arbitrary.map(
  Arbitrary.all([
    elementOf(["GET", "HEAD"]),
    // Small pages often, so that the few stored pets span several of them.
    optional(oneOf([between(PAGE_LIMIT_MIN, 3), between(PAGE_LIMIT_MIN, PAGE_LIMIT_MAX)])),
    optional(Arbitrary.schema(PetStatus)),
    // The service issues cursors for the ids it assigns, never negative ones.
    optional(Arbitrary.filter(IdNumber, (id) => id >= 0n)),
    between(0, 5),
    ValidAuthorization
  ]),
  ([method, limit, status, after, rotation, authorization]): FuzzRequest => {
    const params: Array<[string, string]> = []
    if (limit !== undefined) params.push(["limit", encodeLimit(limit)])
    if (status !== undefined) params.push(["status", status])
    if (after !== undefined) params.push(["cursor", encodeCursor(PetId.make(after))])
    const shift = params.length === 0 ? 0 : rotation % params.length
    const query = new URLSearchParams([...params.slice(shift), ...params.slice(0, shift)]).toString()
    return {
      method,
      target: query === "" ? "/v1/pets" : `/v1/pets?${query}`,
      headers: [["authorization", authorization]],
      body: undefined,
      expect: { kind: "listed", limit: limit ?? 20, status, after }
    }
  }
)

const validGet = Arbitrary.map(
  Arbitrary.all([elementOf(["GET", "HEAD"]), IdNumber, ValidAuthorization]),
  ([method, id, authorization]): FuzzRequest => ({
    method,
    target: `/v1/pets/${id}`,
    headers: [["authorization", authorization]],
    body: undefined,
    expect: { kind: "fetched", id }
  })
)

// A merge patch as a client writes it: the fields it names, `null` removing the status.
const patchText = (patch: PetPatch) =>
  `{${
    [
      ...(patch.name === undefined ? [] : [`"name":${JSON.stringify(patch.name)}`]),
      ...(patch.categoryId === undefined ? [] : [`"categoryId":${patch.categoryId}`]),
      ...(patch.status === undefined ? [] : [`"status":${JSON.stringify(patch.status)}`])
    ].join(",")
  }}`

const PATCH_CONTENT_TYPES = ["application/merge-patch+json", "Application/Merge-Patch+JSON; charset=utf-8", ...JSON_CONTENT_TYPES]

const validPatch = Arbitrary.map(
  Arbitrary.all([IdNumber, Arbitrary.schema(PetPatch), ValidAuthorization, elementOf(PATCH_CONTENT_TYPES)]),
  ([id, patch, authorization, contentType]): FuzzRequest => ({
    method: "PATCH",
    target: `/v1/pets/${id}`,
    headers: [["authorization", authorization], ["content-type", contentType]],
    body: [patchText(patch)],
    expect: { kind: "patched", id }
  })
)

const validDelete = Arbitrary.map(
  Arbitrary.all([IdNumber, ValidAuthorization]),
  ([id, authorization]): FuzzRequest => ({
    method: "DELETE",
    target: `/v1/pets/${id}`,
    headers: [["authorization", authorization]],
    body: undefined,
    expect: { kind: "deleted", id }
  })
)

/** Requests the API documents as valid, built from its schemas. */
export const ValidRequest: Arbitrary.Arbitrary<FuzzRequest> = oneOf([
  validCreate,
  validList,
  validGet,
  validPatch,
  validDelete
])

/**
 * Valid creates except for their body, which is hostile; or the same bodies as a patch of a
 * pet that may exist, where a valid one may apply (a create body names only patch fields).
 */
export const HostileBodyRequest: Arbitrary.Arbitrary<FuzzRequest> = Arbitrary.map(
  Arbitrary.all([HostileCreateBody, ValidAuthorization, ValidContentType, optional(between(1, 3))]),
  ([{ body, expect }, authorization, contentType, patched]) => ({
    method: patched === undefined ? "POST" : "PATCH",
    target: patched === undefined ? "/v1/pets" : `/v1/pets/${patched}`,
    headers: [["authorization", authorization], ["content-type", contentType]],
    body,
    expect: patched === undefined ? expect : ANY
  })
)

// ---------------------------------------------------------------------------------------------
// Hostile headers on valid requests

type HeaderEffect = "keeps" | "refuses" | "unknown"

interface HeaderMutation {
  readonly effect: HeaderEffect
  /** Header fields to drop (lowercase names) and to add. */
  readonly drop: ReadonlyArray<string>
  readonly add: ReadonlyArray<readonly [string, string]>
}

const mutation = (
  effect: HeaderEffect,
  drop: ReadonlyArray<string>,
  add: ReadonlyArray<readonly [string, string]> = []
): HeaderMutation => ({ effect, drop, add })

// Header values Fetch can carry: no CR, LF or NUL, nothing above U+00FF.
const HeaderText = Arbitrary.schema(
  Schema.String.check(Schema.isPattern(/^[\x21-\x7e\xa0-\xff][\x20-\x7e\xa0-\xff]{0,40}$/))
)
const HeaderName = Arbitrary.schema(Schema.String.check(Schema.isPattern(/^x-[a-z0-9!#$%&'*+.^_`|~-]{1,20}$/)))

const authorizationMutation: Arbitrary.Arbitrary<HeaderMutation> = oneOf([
  Arbitrary.Constant(mutation("refuses", ["authorization"])),
  Arbitrary.map(
    elementOf([
      `Bearer ${API_KEY}x`,
      `Bearer ${API_KEY.slice(1)}`,
      `Bearer ${API_KEY.toUpperCase()}`,
      `Bearer ${API_KEY} extra`,
      `Bearer "${API_KEY}"`,
      `Bearer ${API_KEY.replace("-", "\u00e9")}`,
      `Basic ${Buffer.from(`user:${API_KEY}`).toString("base64")}`,
      API_KEY,
      "Bearer",
      "Bearer ",
      ""
    ]),
    (value) => mutation("refuses", ["authorization"], [["authorization", value]])
  ),
  Arbitrary.map(HeaderText, (value) => mutation("refuses", ["authorization"], [["Authorization", `Bearer ${value}`]])),
  Arbitrary.map(
    elementOf([1_000, 20_000, 100_000]),
    (n) => mutation("refuses", ["authorization"], [["authorization", `Bearer ${"k".repeat(n)}`]])
  ),
  // Two fields travel as one comma-joined value, which is no key.
  Arbitrary.map(
    elementOf([`Bearer ${API_KEY}`, "Bearer wrong", ""]),
    (second) => mutation("refuses", [], [["Authorization", second]])
  ),
  Arbitrary.Constant(mutation("unknown", ["authorization"], [["authorization", `Bearer\t${API_KEY}`]]))
])

const contentTypeMutation: Arbitrary.Arbitrary<HeaderMutation> = oneOf([
  Arbitrary.Constant(mutation("refuses", ["content-type"])),
  Arbitrary.map(
    elementOf([
      "text/plain",
      "application/jsonx",
      "application/json-seq",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "json",
      "*/*",
      "application/*",
      "",
      "application/json, application/json",
      `application/json${"x".repeat(10_000)}`
    ]),
    (value) => mutation("refuses", ["content-type"], [["content-type", value]])
  ),
  Arbitrary.map(HeaderText, (value) => mutation("refuses", ["content-type"], [["Content-Type", `text/${value}`]])),
  Arbitrary.map(ValidContentType, (value) => mutation("keeps", ["content-type"], [["Content-Type", value]])),
  // JSON is UTF-8 by definition (RFC 8259); whether another declared charset is refused is not documented.
  Arbitrary.map(
    elementOf([
      "application/json; charset=utf-16",
      "application/json; charset=iso-8859-1",
      "application/json; x=\"a;b\""
    ]),
    (value) => mutation("unknown", ["content-type"], [["content-type", value]])
  )
])

const otherHeaderMutation: Arbitrary.Arbitrary<HeaderMutation> = oneOf([
  Arbitrary.map(
    elementOf<readonly [string, string]>([
      ["accept", "text/html"],
      ["accept", "application/xml;q=1, */*;q=0"],
      ["x-http-method-override", "DELETE"],
      ["x-method-override", "PUT"],
      ["x-forwarded-for", "127.0.0.1, ::1"],
      ["forwarded", "for=unknown;proto=https"],
      ["x-original-url", "/v1/pets/1"],
      ["x-rewrite-url", "/admin"],
      ["x-request-id", "at Object.<anonymous> (/work/src/x.ts:1:2)"],
      ["cookie", "session=__proto__"],
      ["accept-encoding", "gzip, br"],
      ["if-none-match", "*"],
      ["range", "bytes=0-1"]
    ]),
    (field) => mutation("keeps", [], [field])
  ),
  Arbitrary.map(Arbitrary.all([HeaderName, HeaderText]), (field) => mutation("keeps", [], [field])),
  Arbitrary.map(
    elementOf([20, 150]),
    (n) => mutation("keeps", [], Array.from({ length: n }, (_, i) => [`x-junk-${i}`, "v"] as const))
  ),
  // The in-process app has no header size limit of its own (Node's parser answers 431 first).
  Arbitrary.Constant(mutation("unknown", [], [["x-huge", "v".repeat(64 * 1024)]])),
  Arbitrary.map(
    elementOf(["abc", "-1", "0x2000", "1e400", " 12", "12, 12", "99999999999999999999"]),
    (value) => mutation("unknown", ["content-length"], [["content-length", value]])
  ),
  Arbitrary.map(elementOf(["200-ok", "100-continue", ""]), (value) => mutation("unknown", [], [["expect", value]])),
  Arbitrary.map(elementOf(["gzip", "identity", "br"]), (value) => mutation("unknown", [], [["content-encoding", value]]))
])

const applyHeaders = (request: FuzzRequest, m: HeaderMutation): FuzzRequest => ({
  ...request,
  headers: [...request.headers.filter(([name]) => !m.drop.includes(name.toLowerCase())), ...m.add]
})

/** A declared length over the limit is refused before anything else, on every /v1 route. */
const declaredTooLong = (request: FuzzRequest): FuzzRequest => ({
  ...applyHeaders(request, mutation("refuses", ["content-length"], [["content-length", String(MAX_BODY_BYTES + 1)]])),
  expect: REFUSED
})

/**
 * Valid requests with hostile header fields: at most one change each to Authorization and
 * Content-Type, and up to two other fields. Any refusing change makes a refusal; else any
 * change of unknown effect leaves only the invariants.
 */
export const HostileHeaderRequest: Arbitrary.Arbitrary<FuzzRequest> = Arbitrary.flatMap(
  ValidRequest,
  (request) =>
    oneOf([
      Arbitrary.map(
        Arbitrary.all([
          optional(authorizationMutation),
          request.method === "POST" ? optional(contentTypeMutation) : Arbitrary.Constant(undefined),
          Arbitrary.array(otherHeaderMutation, { maxLength: 2 })
        ]),
        ([authorization, contentType, others]) => {
          const ms = [authorization, contentType, ...others].filter((m) => m !== undefined)
          const mutated = ms.reduce(applyHeaders, request)
          const effects = new Set(ms.map((m) => m.effect))
          return {
            ...mutated,
            expect: effects.has("refuses") ? REFUSED : effects.has("unknown") ? ANY : request.expect
          }
        }
      ),
      Arbitrary.Constant(declaredTooLong(request))
    ])
)

// ---------------------------------------------------------------------------------------------
// Hostile methods, paths, queries

const METHODS = [
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
  "get",
  "post",
  "Post",
  "FOO",
  "M-SEARCH",
  "PROPFIND",
  "BREW",
  "PRI",
  "X".repeat(300)
]

const ROUTES = [
  "/v1/pets",
  "/v1/pets/1",
  "/healthz",
  "/readyz",
  "/v1/openapi.json",
  "/docs",
  "/store/orders",
  "/v1/store/orders",
  "/",
  "/v1",
  "/v2/pets",
  "/v1/pets/1/owner"
]

const ID_TEXTS = [
  "-0",
  "+1",
  "01",
  "1e3",
  "0x1",
  "1.0",
  " 1",
  "１",
  "٣",
  "",
  "%31",
  "null",
  "NaN",
  "-1",
  INT64_MAX.toString(),
  (INT64_MAX + 1n).toString(),
  INT64_MIN.toString(),
  (INT64_MIN - 1n).toString(),
  "9".repeat(100),
  "9".repeat(101),
  "9".repeat(5_000),
  "%00",
  "%",
  "%zz",
  "%C0%AF",
  "%ED%A0%80",
  "%F0%9F%98%80",
  "😀",
  "\u202e1",
  "1;jsessionid=x",
  "..",
  "%2e%2e",
  "1%2F2"
]

type PathEdit = (path: string) => string

const PATH_EDITS: ReadonlyArray<PathEdit> = [
  (p) => p,
  (p) => p.toUpperCase(),
  (p) => `${p}/`,
  (p) => p.replaceAll("/", "//"),
  (p) => `/${p}`,
  (p) => p.replace(/^\/v1/, "/v1/."),
  (p) => p.replace(/^\/v1/, "/v1/../v1"),
  (p) => p.replace(/^\/v1/, "/x/%2e%2e/v1"),
  (p) => p.replace(/^\/v1/, "/v1%2F.."),
  (p) => p.replaceAll("/", "\\"),
  (p) => p.replace(/e/, "%65"),
  (p) => p.replace(/e/, "%2565"),
  (p) => `${p}%00`,
  (p) => `${p};a=b`,
  (p) => `${p}/${"a".repeat(5_000)}`,
  (p) => `${p}/ü/😀/\u0085`,
  (p) => `${p}/../../../../etc/passwd`,
  (p) => `${p}#fragment`
]

const PathArb: Arbitrary.Arbitrary<string> = oneOf([
  Arbitrary.map(Arbitrary.all([elementOf(ROUTES), elementOf(PATH_EDITS)]), ([route, edit]) => edit(route)),
  Arbitrary.map(Arbitrary.all([elementOf(ID_TEXTS), elementOf(PATH_EDITS)]), ([id, edit]) => edit(`/v1/pets/${id}`)),
  Arbitrary.schema(
    Schema.String.check(Schema.isPattern(/^(\/[a-zA-Z0-9._~%!$&'()*+,;=:@\u00e9\u{1F600}-]{0,12}){1,4}$/u))
  )
])

const QUERY_KEYS = [
  "limit",
  "status",
  "cursor",
  "tag",
  "q",
  "LIMIT",
  "limit[]",
  "limit[0]",
  "__proto__",
  "constructor",
  "",
  "%6Cimit",
  "limit%00",
  "%FF",
  "x"
]
const QUERY_VALUES = [
  "cat",
  "Cat",
  "zo",
  "z%00z",
  "%CC%81%CC%81",
  "%ED%A0%80%ED%A0%80",
  "1",
  "20",
  "100",
  "0",
  "101",
  "-1",
  "-0",
  "1e1",
  "1e400",
  "1.0",
  "+5",
  " 5",
  "%205",
  "５",
  "0x10",
  "99999999999999999999999",
  "NaN",
  "",
  "available",
  "AVAILABLE",
  "lost",
  "YWZ0ZXI6MQ",
  "YWZ0ZXI6MQ==",
  "!!!",
  encodeCursor(PetId.make(INT64_MAX)),
  Buffer.from("after:-1").toString("base64url"),
  Buffer.from("after:01").toString("base64url"),
  Buffer.from(`after:${INT64_MAX + 1n}`).toString("base64url"),
  "%FF",
  "%",
  "😀",
  "a".repeat(5_000)
]

const QueryArb: Arbitrary.Arbitrary<string> = oneOf([
  Arbitrary.Constant(""),
  Arbitrary.map(
    Arbitrary.array(Arbitrary.all([elementOf(QUERY_KEYS), elementOf(QUERY_VALUES), elementOf(["=", "", "=="])]), {
      minLength: 1,
      maxLength: 4
    }),
    (pairs) => `?${pairs.map(([key, value, eq]) => `${key}${eq}${value}`).join("&")}`
  ),
  elementOf(["?", "??", "?&&", "?=", "?&=&", "?limit", "?limit=1&&limit=2", "?status=sold&status=pending"])
])

const AuthArb = oneOf<ReadonlyArray<readonly [string, string]>>([
  Arbitrary.Constant([]),
  Arbitrary.map(ValidAuthorization, (value) => [["authorization", value] as const]),
  Arbitrary.Constant([["authorization", "Bearer wrong"] as const])
])

const BodyArb: Arbitrary.Arbitrary<BodyCase | undefined> = oneOf<BodyCase | undefined>([
  Arbitrary.Constant(undefined),
  Arbitrary.map(PetTextArb, validBody),
  HostileCreateBody
])

/** Any method on any path and query, with or without a key, with or without a body. */
export const HostileTargetRequest: Arbitrary.Arbitrary<FuzzRequest> = Arbitrary.map(
  Arbitrary.all([
    elementOf(METHODS),
    PathArb,
    QueryArb,
    AuthArb,
    optional(ValidContentType),
    BodyArb
  ]),
  ([method, path, query, auth, contentType, body]) => ({
    method,
    target: path + query,
    headers: contentType === undefined ? auth : [...auth, ["content-type", contentType] as const],
    body: body !== undefined && bodyAllowed(method) ? body.body : undefined,
    expect: ANY
  })
)

/** The pets a case starts with, stored directly (not through HTTP). */
export const InitialPets: Arbitrary.Arbitrary<ReadonlyArray<NewPet>> = Arbitrary.array(Arbitrary.schema(NewPet), {
  maxLength: 5
})
