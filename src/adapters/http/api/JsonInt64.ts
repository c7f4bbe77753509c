import { Effect, Result, Schema, SchemaGetter, SchemaIssue, SchemaParser, SchemaTransformation } from "effect"
import { HttpApiSchema } from "effect/http-api"
import { closingQuote, int64Reviver, parseInt64Json, QUOTE } from "../../../domain/Int64Json.ts"
import { JSON_MEDIA_TYPE } from "./JsonContentType.ts"

// Node 24 has both; TypeScript 5.9's lib does not declare them yet.
declare global {
  interface JSON {
    rawJSON(text: string): RawJson
    isRawJSON(value: unknown): value is RawJson
  }
}

/** What `JSON.rawJSON` returns: text that `JSON.stringify` writes verbatim. */
export interface RawJson {
  readonly rawJSON: string
}

const isWireInt64 = (u: unknown): u is bigint | RawJson => typeof u === "bigint" || JSON.isRawJSON(u)

// The JSON-side representation: a bigint after lossless parsing, a RawJson before stringifying.
// `toCodecJson: () => undefined` keeps HttpApi's JSON codec from turning it into a string.
const WireInt64 = Schema.declare(isWireInt64, {
  expected: "an integer",
  toCodecJson: () => undefined,
  toCodecStringTree: () => undefined
}).check(Schema.makeFilter(() => true, { toJsonSchema: () => ({ type: "integer", format: "int64" }) }))

/**
 * Wraps a bigint domain schema so that, in JSON, it is a bare integer with all of its
 * digits: decoded from what {@link parseInt64Json} produced, encoded with `JSON.rawJSON`.
 */
export const jsonInt64 = <S extends Schema.Codec<bigint, bigint>>(domain: S) =>
  WireInt64.pipe(
    Schema.decodeTo(
      domain,
      SchemaTransformation.transform({
        decode: (wire: bigint | RawJson): bigint => typeof wire === "bigint" ? wire : BigInt(wire.rawJSON),
        encode: (value: bigint): bigint | RawJson => JSON.rawJSON(value.toString())
      })
    )
  )

/** What the document says of a {@link jsonInt} field besides `type: integer`. */
export interface JsonIntDocumentation {
  readonly description?: string | undefined
  readonly minimum?: number | undefined
}

// The same wire value, documented as a plain JSON integer: what a number field is.
const wireInt = ({ description, minimum }: JsonIntDocumentation) =>
  Schema.declare(isWireInt64, {
    expected: "an integer",
    toCodecJson: () => undefined,
    toCodecStringTree: () => undefined,
    ...(description === undefined ? {} : { description })
  }).check(Schema.makeFilter(() => true, {
    toJsonSchema: () => (minimum === undefined ? { type: "integer" } : { type: "integer", minimum })
  }))

/**
 * Wraps a number domain schema (a count, a status code, a version) for a lossless JSON
 * body, whose reader makes every integer a bigint: a bare JSON integer, decoded to a
 * number (the domain schema then refuses one past 2^53 as it refuses any unsafe integer),
 * encoded with `JSON.rawJSON`. The document shows the wire side: its description and
 * minimum are given here.
 */
export const jsonInt = <S extends Schema.Codec<number, number>>(domain: S, documentation: JsonIntDocumentation = {}) =>
  wireInt(documentation).pipe(
    Schema.decodeTo(
      domain,
      SchemaTransformation.transform({
        decode: (wire: bigint | RawJson): number => Number(typeof wire === "bigint" ? wire : wire.rawJSON),
        encode: (value: number): bigint | RawJson => JSON.rawJSON(String(value))
      })
    )
  )

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })
const utf8 = new TextEncoder()

// Invalid UTF-8 is refused, not replaced with U+FFFD: a name is stored exactly as sent or not at all.
const Utf8Text = Schema.Uint8Array.pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transformEffect({
      decode: (bytes: Uint8Array) =>
        Effect.try({
          try: () => strictUtf8.decode(bytes),
          catch: () => new SchemaIssue.InvalidValue({ message: "is not valid UTF-8" })
        }),
      encode: (text: string) => Effect.succeed(utf8.encode(text))
    })
  )
)

const COMMA = 0x2c
const OPEN = new Set([0x5b, 0x7b]) // [ {
const CLOSE = new Set([0x5d, 0x7d]) // ] }
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d])

/**
 * The number of values (containers included) in a JSON text, counted in one pass over
 * its characters without parsing: every value but the root starts a container's first
 * element or follows a comma. Exact for valid JSON; a malformed text is refused later.
 */
const countJsonValues = (text: string): number => {
  let count = 1
  let previous = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (WHITESPACE.has(c)) continue
    if (c === QUOTE) i = closingQuote(text, i)
    else if (OPEN.has(c) || c === COMMA) count++
    else if (CLOSE.has(c) && OPEN.has(previous)) count-- // an empty container has no first element
    previous = c
  }
  return count
}

// The reviver costs V8 about a quarter of a microsecond per value (4 KiB of `[1,1,...`
// about 1.3 ms) and deep nesting slows even a plain parse: a body with more values than a
// pet could need is refused after one cheap pass, before any parse.
const atMostValues = (max: number) =>
  Schema.makeFilter((text: string) => countJsonValues(text) <= max, { message: `holds more than ${max} JSON values` }, true)

// Schema.fromJsonString's transformation with the lossless parse: what
// `JSON.parse(text, int64Reviver)` gives, without a reviver's cost. Its encoding is
// fromJsonString's with that reviver, whose document says, as before, that the text is
// not a plain JSON encoding of the schema.
const fromInt64JsonString = new SchemaTransformation.Transformation(
  SchemaGetter.transformEffect((text: string, options) => {
    try {
      return Effect.succeed(parseInt64Json(text))
    } catch {
      return Effect.fail(new SchemaIssue.InvalidValue({ expected: "a valid JSON string" }, text, options))
    }
  }),
  SchemaTransformation.fromJsonString({ reviver: int64Reviver as never }).encode
)

/** Options of {@link LosslessJsonBody}. */
export interface LosslessJsonBodyOptions {
  /** Most JSON values a body to decode may hold; for request bodies, whose size is the client's choice. */
  readonly maxValues?: number | undefined
  /** The body's media type; default application/json. */
  readonly contentType?: string | undefined
}

/** A body's decode for valid bytes: a success with its value, or a failure whose reason only the full decode gives. */
export type ValidBodyDecode = (bytes: Uint8Array) => Result.Result<unknown, unknown>

const validDecodes = new WeakMap<Schema.Top, ValidBodyDecode>()

/**
 * The decode of a {@link LosslessJsonBody} for valid bytes, as its schema decodes them:
 * the same steps (strict UTF-8, the value count, the lossless parse, the inner schema),
 * called directly, so that the inner schema is compiled (SchemaJITCompiler) and no step
 * needs an effect. The schema's own decode is still the only one that explains a
 * refusal: on any failure this fails without a reason and the caller decodes with the
 * schema. `undefined` for any other schema.
 */
export const validBodyDecode = (body: Schema.Top): ValidBodyDecode | undefined => validDecodes.get(body)

const refused = Result.fail(undefined)

/**
 * A JSON body (request or response) that HttpApi carries as bytes while this schema
 * decodes them as strict UTF-8, parses them losslessly and stringifies `JSON.rawJSON`
 * values verbatim. HttpApi's own JSON path, on the server and in its client, decodes
 * leniently and uses plain `JSON.parse`, which rounds past 2^53.
 */
export const LosslessJsonBody = <S extends Schema.Top>(schema: S, options?: LosslessJsonBodyOptions) => {
  const maxValues = options?.maxValues
  const body = Utf8Text.pipe(
    Schema.decodeTo(maxValues === undefined ? Schema.String : Schema.String.check(atMostValues(maxValues))),
    Schema.decodeTo(schema, fromInt64JsonString),
    HttpApiSchema.asUint8Array({ contentType: options?.contentType ?? JSON_MEDIA_TYPE })
  )
  const decodeValue = SchemaParser.decodeUnknownResult(schema as unknown as Schema.Decoder<unknown>)
  validDecodes.set(body, (bytes) => {
    let value: unknown
    try {
      const text = strictUtf8.decode(bytes)
      if (maxValues !== undefined && countJsonValues(text) > maxValues) return refused
      value = parseInt64Json(text)
    } catch {
      return refused
    }
    const decoded = decodeValue(value)
    return Result.isSuccess(decoded) ? decoded : refused
  })
  return body
}
