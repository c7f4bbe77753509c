/**
 * Reference HTTP server for the end-to-end comparison: the same routes, status codes
 * and JSON shapes as the service, written directly on node:http with a Map and arrays.
 * It does the work the service must do (bearer check with SHA-256 + timingSafeEqual,
 * lossless int64 JSON parse with a reviver, field validation, keyset paging with a
 * Link header, JSON.rawJSON for int64 output, a 64 KiB body cap answered 413) and
 * nothing else: no request log, no framework, no schema library.
 *
 * Usage: node bench/reference-server.ts '{"port":1234,"apiKeys":["k"]}'
 * Listens on 127.0.0.1 only.
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { firstAfter } from "./keyset.ts"

interface Args {
  readonly port: number
  readonly apiKeys: ReadonlyArray<string>
}
const args = JSON.parse(process.argv[2] ?? "{}") as Args

// JSON.rawJSON exists in Node 24; go through a typed view rather than relying on lib typings.
const rawJson = (JSON as unknown as { rawJSON: (text: string) => unknown }).rawJSON

const MAX_BODY_BYTES = 64 * 1024
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const STATUSES = new Set(["available", "pending", "sold"])
const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/
const DIGITS = /^(?:0|[1-9]\d*)$/
const SIGNED_DIGITS = /^-?(?:0|[1-9]\d*)$/
const C0_CONTROL = /[\u0000-\u001f]/u
const NON_WHITESPACE = /\S/u
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i

interface StoredPet {
  readonly id: bigint
  readonly name: string
  readonly categoryId: bigint
  readonly status?: string
}

const all: Array<StoredPet> = []
const byId = new Map<bigint, StoredPet>()
const byStatus = new Map<string, Array<StoredPet>>()
let lastId = 0n

const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest()
const accepted = args.apiKeys.map(digest)

const authorized = (request: IncomingMessage): "ok" | "missing" | "invalid" => {
  const header = request.headers["authorization"]
  if (header === undefined) return "missing"
  const match = /^Bearer (.+)$/i.exec(header)
  if (match === null) return "invalid"
  const presented = digest(match[1]!)
  let ok = false
  for (const candidate of accepted) ok = timingSafeEqual(candidate, presented) || ok
  return ok ? "ok" : "invalid"
}

const send = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers
  })
  response.end(text)
}

const fail = (response: ServerResponse, status: number, code: string, message: string, headers?: Record<string, string>) =>
  send(response, status, { code, message, status }, headers)

const toJson = (pet: StoredPet) =>
  pet.status === undefined
    ? { id: rawJson(String(pet.id)), name: pet.name, categoryId: rawJson(String(pet.categoryId)) }
    : { id: rawJson(String(pet.id)), name: pet.name, categoryId: rawJson(String(pet.categoryId)), status: pet.status }


const reviver = (_key: string, value: unknown, context?: { readonly source?: string }): unknown =>
  typeof value === "number" && context?.source !== undefined && INTEGER_LITERAL.test(context.source)
    ? BigInt(context.source)
    : value

const countCodePoints = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/** The createPet body rules; a message naming the field, or the validated pet. */
const validateNewPet = (body: unknown): string | { name: string; categoryId: bigint; status?: string } => {
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
  if (typeof status !== "string" || !STATUSES.has(status)) return `status: must be one of "available", "pending", "sold"`
  return { name, categoryId, status }
}

const createPet = (request: IncomingMessage, response: ServerResponse) => {
  const contentType = request.headers["content-type"]
  if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType)) {
    request.resume()
    return fail(response, 415, "unsupported_media_type", `content-type ${contentType ?? "(none)"} is not supported`)
  }
  const declared = Number(request.headers["content-length"] ?? "0")
  const tooLarge = () =>
    fail(response, 413, "payload_too_large", `the request body exceeds ${MAX_BODY_BYTES} bytes`, { connection: "close" })
  if (declared > MAX_BODY_BYTES) {
    tooLarge()
    return
  }
  const chunks: Array<Buffer> = []
  let size = 0
  let aborted = false
  request.on("data", (chunk: Buffer) => {
    if (aborted) return
    size += chunk.length
    if (size > MAX_BODY_BYTES) {
      aborted = true
      tooLarge()
      return
    }
    chunks.push(chunk)
  })
  request.on("end", () => {
    if (aborted) return
    let parsed: unknown
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"), reviver as never)
    } catch {
      return fail(response, 400, "invalid_request", "body: is not valid JSON")
    }
    const pet = validateNewPet(parsed)
    if (typeof pet === "string") return fail(response, 400, "invalid_request", pet)
    lastId += 1n
    const stored: StoredPet = { ...pet, id: lastId }
    all.push(stored)
    byId.set(stored.id, stored)
    if (stored.status !== undefined) {
      const bucket = byStatus.get(stored.status)
      if (bucket === undefined) byStatus.set(stored.status, [stored])
      else bucket.push(stored)
    }
    send(response, 201, toJson(stored), { location: `/v1/pets/${stored.id}` })
  })
}

const listPets = (url: URL, response: ServerResponse) => {
  const limitText = url.searchParams.get("limit")
  const status = url.searchParams.get("status")
  const cursor = url.searchParams.get("cursor")
  let limit = 20
  if (limitText !== null) {
    if (!DIGITS.test(limitText) || Number(limitText) < 1 || Number(limitText) > 100) {
      return fail(response, 400, "invalid_request", "limit: must be an integer from 1 to 100")
    }
    limit = Number(limitText)
  }
  if (status !== null && !STATUSES.has(status)) {
    return fail(response, 400, "invalid_request", `status: must be one of "available", "pending", "sold"`)
  }
  let after: bigint | undefined
  if (cursor !== null) {
    const text = Buffer.from(cursor, "base64url").toString("utf8")
    const digits = text.startsWith("after:") ? text.slice(6) : ""
    if (!DIGITS.test(digits)) return fail(response, 400, "invalid_request", "cursor: is not a cursor this service issued")
    after = BigInt(digits)
  }
  const source = status === null ? all : byStatus.get(status) ?? []
  const start = firstAfter(source, after)
  const rows = source.slice(start, start + limit + 1)
  const page = rows.slice(0, limit)
  const headers: Record<string, string> = {}
  const last = page[page.length - 1]
  if (rows.length > limit && last !== undefined) {
    const next = new URLSearchParams({ limit: String(limit) })
    if (status !== null) next.set("status", status)
    next.set("cursor", Buffer.from(`after:${last.id}`, "utf8").toString("base64url"))
    headers["link"] = `</v1/pets?${next}>; rel="next"`
  }
  send(response, 200, page.map(toJson), headers)
}

const DEPRECATION_HEADERS = {
  deprecation: `@${Date.UTC(2026, 10, 21) / 1000}`,
  sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
  link: "</v1/pets>; rel=\"successor-version\""
}

const getPet = (idText: string, response: ServerResponse) => {
  if (!SIGNED_DIGITS.test(idText)) {
    return fail(response, 400, "invalid_request", "petId: expected an integer", DEPRECATION_HEADERS)
  }
  const id = BigInt(idText)
  const pet = byId.get(id)
  if (pet === undefined) return fail(response, 404, "not_found", `pet ${id} not found`, DEPRECATION_HEADERS)
  send(response, 200, toJson(pet), DEPRECATION_HEADERS)
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://x")
  if (url.pathname === "/healthz" && request.method === "GET") {
    return send(response, 200, { status: "ok" })
  }
  if (url.pathname === "/v1/pets" || url.pathname.startsWith("/v1/pets/")) {
    const auth = authorized(request)
    if (auth !== "ok") {
      request.resume()
      return fail(response, 401, "unauthorized", auth === "missing" ? "an API key is required" : "the API key is not valid")
    }
    if (url.pathname === "/v1/pets") {
      if (request.method === "GET") return listPets(url, response)
      if (request.method === "POST") return createPet(request, response)
    } else if (request.method === "GET") {
      return getPet(url.pathname.slice("/v1/pets/".length), response)
    }
  }
  request.resume()
  fail(response, 404, "not_found", `no route for ${request.method} ${url.pathname}`)
})

server.listen(args.port, "127.0.0.1", () => {
  process.stdout.write(`reference server listening on 127.0.0.1:${args.port}\n`)
})

const shutdown = () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
  setTimeout(() => process.exit(0), 2_000).unref()
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
