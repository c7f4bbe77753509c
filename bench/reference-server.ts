/**
 * Reference HTTP server for the end-to-end comparison: the same routes, status codes
 * and JSON shapes as the service, written directly on node:http with a Map and arrays.
 * It does the work the service must do (bearer check with SHA-256 + timingSafeEqual,
 * lossless int64 JSON parse with a reviver, field validation, keyset paging with a
 * Link header, JSON.rawJSON for int64 output, a 64 KiB body cap answered 413) and
 * nothing else: no request log, no framework, no schema library. The request rules are
 * those of peers/wire-rules.ts, shared with the Effect floor peer (peers/effect-server.ts).
 *
 * Usage: node bench/reference-server.ts '{"port":1234,"apiKeys":["k"]}'
 * Listens on 127.0.0.1 only.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { firstAfter } from "./keyset.ts"
import type { Pet, PetStatus } from "./peers/pet-store.ts"
import {
  bearerCheck,
  DEPRECATION_HEADERS,
  errorBody,
  invalidRequest,
  isJsonContentType,
  isWireError,
  keysetPage,
  MAX_BODY_BYTES,
  noRoute,
  parseBody,
  parseListQuery,
  parsePetId,
  payloadTooLarge,
  petNotFound,
  toJson,
  unauthorized,
  unsupportedMediaType,
  validateNewPet,
  type WireError
} from "./peers/wire-rules.ts"

interface Args {
  readonly port: number
  readonly apiKeys: ReadonlyArray<string>
}
const args = JSON.parse(process.argv[2] ?? "{}") as Args

const all: Array<Pet> = []
const byId = new Map<bigint, Pet>()
const byStatus = new Map<PetStatus, Array<Pet>>()
let lastId = 0n

const authorized = bearerCheck(args.apiKeys)

const send = (response: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}) => {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers
  })
  response.end(text)
}

const fail = (response: ServerResponse, error: WireError, headers?: Readonly<Record<string, string>>) =>
  send(response, error.status, errorBody(error), { ...error.headers, ...headers })

const createPet = (request: IncomingMessage, response: ServerResponse) => {
  const contentType = request.headers["content-type"]
  if (!isJsonContentType(contentType)) {
    request.resume()
    return fail(response, unsupportedMediaType(contentType))
  }
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > MAX_BODY_BYTES) return fail(response, payloadTooLarge)
  const chunks: Array<Buffer> = []
  let size = 0
  let aborted = false
  request.on("data", (chunk: Buffer) => {
    if (aborted) return
    size += chunk.length
    if (size > MAX_BODY_BYTES) {
      aborted = true
      fail(response, payloadTooLarge)
      return
    }
    chunks.push(chunk)
  })
  request.on("end", () => {
    if (aborted) return
    const parsed = parseBody(Buffer.concat(chunks).toString("utf8"))
    if (isWireError(parsed)) return fail(response, parsed)
    const pet = validateNewPet(parsed.value)
    if (typeof pet === "string") return fail(response, invalidRequest(pet))
    lastId += 1n
    const stored: Pet = { ...pet, id: lastId }
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
  const query = parseListQuery(
    url.searchParams.get("limit") ?? undefined,
    url.searchParams.get("status") ?? undefined,
    url.searchParams.get("cursor") ?? undefined
  )
  if (isWireError(query)) return fail(response, query)
  const source = query.status === undefined ? all : byStatus.get(query.status) ?? []
  const start = firstAfter(source, query.after)
  const { page, link } = keysetPage(source.slice(start, start + query.limit + 1), query)
  send(response, 200, page.map(toJson), link === undefined ? {} : { link })
}

const getPet = (idText: string, response: ServerResponse) => {
  const id = parsePetId(idText)
  if (typeof id !== "bigint") return fail(response, id, DEPRECATION_HEADERS)
  const pet = byId.get(id)
  if (pet === undefined) return fail(response, petNotFound(id), DEPRECATION_HEADERS)
  send(response, 200, toJson(pet), DEPRECATION_HEADERS)
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://x")
  if (url.pathname === "/healthz" && request.method === "GET") {
    return send(response, 200, { status: "ok" })
  }
  if (url.pathname === "/v1/pets" || url.pathname.startsWith("/v1/pets/")) {
    const auth = authorized(request.headers["authorization"])
    if (auth !== "ok") {
      request.resume()
      return fail(response, unauthorized(auth))
    }
    if (url.pathname === "/v1/pets") {
      if (request.method === "GET") return listPets(url, response)
      if (request.method === "POST") return createPet(request, response)
    } else if (request.method === "GET") {
      return getPet(url.pathname.slice("/v1/pets/".length), response)
    }
  }
  request.resume()
  fail(response, noRoute(request.method ?? "GET", url.pathname))
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
