/**
 * The request rules of the hand-written servers (the bare node:http reference and the
 * Effect floor peer), in one place so both answer the same requests with the same
 * bytes and differ only in the HTTP stack under them: the bearer check (SHA-256 +
 * timingSafeEqual over every key), lossless int64 JSON (a reviver that keeps integer
 * literals as BigInt, JSON.rawJSON on output), the createPet body rules, the list query
 * and its keyset Link, the path id, and the `{code, message, status}` Error bodies.
 * No schema library: plain checks, as cheap as they come.
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { PET_STATUSES, type NewPet, type Pet, type PetStatus } from "./pet-store.ts"

// JSON.rawJSON exists in Node 24; go through a typed view rather than relying on lib typings.
const rawJson = (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON

export const MAX_BODY_BYTES = 64 * 1024
export const LIST_LIMIT_DEFAULT = 20
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const STATUSES: ReadonlySet<string> = new Set(PET_STATUSES)
const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/
const DIGITS = /^(?:0|[1-9]\d*)$/
const C0_CONTROL = /[\u0000-\u001f]/u
const NON_WHITESPACE = /\S/u
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i
const CURSOR_PREFIX = "after:"
const STATUS_RULE = `status: must be one of "available", "pending", "sold"`

// ---------------------------------------------------------------------------------------
// Errors

/** An error answer: its status, its `{code, message, status}` body and any extra headers. */
export interface WireError {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly headers?: Readonly<Record<string, string>>
}

export const errorBody = (error: WireError) => ({ code: error.code, message: error.message, status: error.status })

export const invalidRequest = (message: string): WireError => ({ status: 400, code: "invalid_request", message })

export const unauthorized = (credential: "missing" | "invalid"): WireError => ({
  status: 401,
  code: "unauthorized",
  message: credential === "missing" ? "an API key is required" : "the API key is not valid"
})

export const notFound = (message: string): WireError => ({ status: 404, code: "not_found", message })

export const noRoute = (method: string, path: string): WireError => notFound(`no route for ${method} ${path}`)

export const payloadTooLarge: WireError = {
  status: 413,
  code: "payload_too_large",
  message: `the request body exceeds ${MAX_BODY_BYTES} bytes`,
  headers: { connection: "close" }
}

export const unsupportedMediaType = (contentType: string | undefined): WireError => ({
  status: 415,
  code: "unsupported_media_type",
  message: `content-type ${contentType ?? "(none)"} is not supported`
})

export const internalError: WireError = { status: 500, code: "internal_error", message: "the server failed to answer" }

// ---------------------------------------------------------------------------------------
// Authorization

const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest()

/** The bearer check over the given keys: every key is compared, so timing does not tell which one nearly matched. */
export const bearerCheck = (apiKeys: ReadonlyArray<string>) => {
  const accepted = apiKeys.map(digest)
  return (header: string | undefined): "ok" | "missing" | "invalid" => {
    if (header === undefined) return "missing"
    const match = /^Bearer (.+)$/i.exec(header)
    if (match === null) return "invalid"
    const presented = digest(match[1]!)
    let ok = false
    for (const candidate of accepted) ok = timingSafeEqual(candidate, presented) || ok
    return ok ? "ok" : "invalid"
  }
}

// ---------------------------------------------------------------------------------------
// JSON

/** A pet on the wire: int64 fields with every digit. */
export const toJson = (pet: Pet) =>
  pet.status === undefined
    ? { id: rawJson(String(pet.id)), name: pet.name, categoryId: rawJson(String(pet.categoryId)) }
    : { id: rawJson(String(pet.id)), name: pet.name, categoryId: rawJson(String(pet.categoryId)), status: pet.status }

/** JSON.parse reviver: integer literals become BigInt, so a categoryId above 2^53 stays exact. */
export const reviver = (_key: string, value: unknown, context?: { readonly source?: string }): unknown =>
  typeof value === "number" && context?.source !== undefined && INTEGER_LITERAL.test(context.source)
    ? BigInt(context.source)
    : value

/** The request body as JSON with int64 kept exact, or the 400 for a body that is not JSON. */
export const parseBody = (text: string): { readonly value: unknown } | WireError => {
  try {
    return { value: JSON.parse(text, reviver as never) }
  } catch {
    return invalidRequest("body: is not valid JSON")
  }
}

export const isJsonContentType = (contentType: string | undefined): contentType is string =>
  contentType !== undefined && JSON_MEDIA_TYPE.test(contentType)

// ---------------------------------------------------------------------------------------
// Operations' inputs

const countCodePoints = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/** The createPet body rules; a message naming the field, or the validated pet. */
export const validateNewPet = (body: unknown): string | NewPet => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body: expected an object"
  const record = body as Record<string, unknown>
  const name = record["name"]
  if (name === undefined) return "name: is required"
  if (typeof name !== "string") return "name: expected a string"
  if (name.length < 1 || !NON_WHITESPACE.test(name)) return "name: must contain at least one non-whitespace character"
  if (!name.isWellFormed()) return "name: must not contain lone surrogates"
  if (C0_CONTROL.test(name)) return "name: must not contain NUL or other control characters"
  if (countCodePoints(name) > 255) return "name: must be at most 255 characters"
  const categoryId = record["categoryId"]
  if (categoryId === undefined) return "categoryId: is required"
  if (typeof categoryId !== "bigint" || categoryId < INT64_MIN || categoryId > INT64_MAX) {
    return "categoryId: expected an integer"
  }
  const status = record["status"]
  if (status === undefined) return { name, categoryId }
  if (typeof status !== "string" || !STATUSES.has(status)) return STATUS_RULE
  return { name, categoryId, status: status as PetStatus }
}

export interface ListQuery {
  readonly limit: number
  readonly status: PetStatus | undefined
  /** Keyset cursor: only pets with a greater id. */
  readonly after: bigint | undefined
}

/** The listPets query parameters (each absent or its first value), or the 400 naming the one that is wrong. */
export const parseListQuery = (
  limitText: string | undefined,
  status: string | undefined,
  cursor: string | undefined
): ListQuery | WireError => {
  let limit = LIST_LIMIT_DEFAULT
  if (limitText !== undefined) {
    if (!DIGITS.test(limitText) || Number(limitText) < 1 || Number(limitText) > 100) {
      return invalidRequest("limit: must be an integer from 1 to 100")
    }
    limit = Number(limitText)
  }
  if (status !== undefined && !STATUSES.has(status)) return invalidRequest(STATUS_RULE)
  let after: bigint | undefined
  if (cursor !== undefined) {
    const text = Buffer.from(cursor, "base64url").toString("utf8")
    const digits = text.startsWith(CURSOR_PREFIX) ? text.slice(CURSOR_PREFIX.length) : ""
    if (!DIGITS.test(digits)) return invalidRequest("cursor: is not a cursor this service issued")
    after = BigInt(digits)
  }
  return { limit, status: status as PetStatus | undefined, after }
}

export const isWireError = (value: object): value is WireError => "code" in value

/**
 * One page from `rows` (fetched with `limit + 1`: the extra row tells whether a next page
 * exists without a count query) and its Link header value, if there is a next page.
 */
export const keysetPage = (
  rows: ReadonlyArray<Pet>,
  query: ListQuery
): { readonly page: ReadonlyArray<Pet>; readonly link: string | undefined } => {
  const page = rows.slice(0, query.limit)
  const last = page[page.length - 1]
  if (rows.length <= query.limit || last === undefined) return { page, link: undefined }
  const next = new URLSearchParams({ limit: String(query.limit) })
  if (query.status !== undefined) next.set("status", query.status)
  next.set("cursor", Buffer.from(`${CURSOR_PREFIX}${last.id}`, "utf8").toString("base64url"))
  return { page, link: `</v1/pets?${next}>; rel="next"` }
}

/** The getPet path id as an int64, or the 400. */
export const parsePetId = (text: string | undefined): bigint | WireError => {
  if (text === undefined || !INTEGER_LITERAL.test(text)) return invalidRequest("petId: expected an integer")
  const id = BigInt(text)
  return id < INT64_MIN || id > INT64_MAX ? invalidRequest("petId: expected an integer") : id
}

export const petNotFound = (id: bigint): WireError => notFound(`pet ${id} not found`)

/** GET /v1/pets/{petId} is deprecated in favour of the list: every answer says so. */
export const DEPRECATION_HEADERS: Readonly<Record<string, string>> = {
  deprecation: `@${Date.UTC(2026, 10, 21) / 1000}`,
  sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
  link: "</v1/pets>; rel=\"successor-version\""
}
