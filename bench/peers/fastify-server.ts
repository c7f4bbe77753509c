/**
 * Fastify 5 peer for the side-by-side HTTP benchmark: Animal Store's three animal
 * operations (list with keyset paging and a Link header, create, get by id) and its
 * bearer check, written the way a Fastify service usually is: JSON schemas validate
 * query, params and body (Ajv), response schemas serialize (fast-json-stringify), one
 * error handler shapes every error as { code, message, status }.
 *
 * int64: request bodies are parsed with a reviver that turns integer literals into
 * BigInt (checked by an `int64` Ajv keyword), the store hands back bigint, and
 * fast-json-stringify writes a bigint under `type: integer` as its exact digits.
 * Logging is Fastify's default (off).
 *
 * Usage: node bench/peers/fastify-server.ts '{"port":1234,"apiKeys":["k"],"store":"map"}'
 *        (store "pg" needs "databaseUrl"). Listens on 127.0.0.1 only.
 */
import { createHash, timingSafeEqual } from "node:crypto"
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from "fastify"
import { openStore, peerArgs } from "./peer-args.ts"
import { PET_STATUSES, type PetStatus, type PetStore } from "./pet-store.ts"

const args = peerArgs()

const MAX_BODY_BYTES = 64 * 1024
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/
const CURSOR_PREFIX = "after:"

// ---------------------------------------------------------------------------------------
// Schemas

const PetSchema = {
  type: "object",
  required: ["id", "name", "categoryId"],
  properties: {
    id: { type: "integer" },
    name: { type: "string" },
    categoryId: { type: "integer" },
    status: { type: "string" }
  }
} as const

const ErrorSchema = {
  type: "object",
  required: ["code", "message", "status"],
  properties: { code: { type: "string" }, message: { type: "string" }, status: { type: "integer" } }
} as const

const NewPetSchema = {
  type: "object",
  required: ["name", "categoryId"],
  properties: {
    // At least one non-white-space character, no C0 control character.
    name: { type: "string", minLength: 1, maxLength: 255, pattern: "^(?=[\\s\\S]*\\S)[^\\u0000-\\u001f]*$" },
    categoryId: { int64: true },
    status: { type: "string", enum: PET_STATUSES }
  }
} as const

const ListQuerySchema = {
  type: "object",
  properties: {
    limit: { type: "integer", minimum: 1, maximum: 100, default: 20 },
    status: { type: "string", enum: PET_STATUSES },
    cursor: { type: "string", pattern: "^[A-Za-z0-9_-]+$" }
  }
} as const

const PetIdParamsSchema = {
  type: "object",
  required: ["petId"],
  properties: { petId: { type: "string", pattern: "^-?(?:0|[1-9][0-9]*)$" } }
} as const

// ---------------------------------------------------------------------------------------
// Errors and auth

class HttpError extends Error {
  readonly status: number
  readonly code: string
  constructor(status: number, code: string, message: string) {
    super(message)
    this.status = status
    this.code = code
  }
}

const errorBody = (status: number, code: string, message: string) => ({ code, message, status })

const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest()
const accepted = args.apiKeys.map(digest)

const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
  const header = request.headers.authorization
  const match = header === undefined ? null : /^Bearer (.+)$/i.exec(header)
  let ok = false
  if (match !== null) {
    const presented = digest(match[1]!)
    // Every key is compared, so the time taken does not tell which one nearly matched.
    for (const candidate of accepted) ok = timingSafeEqual(candidate, presented) || ok
  }
  if (ok) return undefined
  const message = header === undefined ? "an API key is required" : "the API key is not valid"
  // Returning the reply ends the request here; async hooks must not also call done.
  return reply.code(401).header("www-authenticate", `Bearer realm="animal-store"`).send(errorBody(401, "unauthorized", message))
}

// ---------------------------------------------------------------------------------------
// App

const store: PetStore = await openStore(args)

const app = Fastify({
  bodyLimit: MAX_BODY_BYTES,
  ajv: {
    onCreate: (ajv) => {
      ajv.addKeyword({
        keyword: "int64",
        schemaType: "boolean",
        errors: false,
        validate: (_schema: boolean, data: unknown) => typeof data === "bigint" && data >= INT64_MIN && data <= INT64_MAX
      })
    }
  }
})

// Integer literals become BigInt before validation, so a categoryId above 2^53 stays exact.
const reviver = (_key: string, value: unknown, context?: { readonly source?: string }): unknown =>
  typeof value === "number" && context?.source !== undefined && INTEGER_LITERAL.test(context.source)
    ? BigInt(context.source)
    : value

// JSON only, as the service: a text/plain body is 415, not a string for the schema to refuse.
app.removeContentTypeParser("text/plain")
app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
  try {
    done(null, JSON.parse(body as string, reviver as never))
  } catch {
    done(new HttpError(400, "invalid_request", "body: is not valid JSON"), undefined)
  }
})

app.setErrorHandler((error: FastifyError | HttpError, _request, reply) => {
  if (error instanceof HttpError) return reply.code(error.status).send(errorBody(error.status, error.code, error.message))
  if (error.validation !== undefined) {
    return reply.code(400).send(errorBody(400, "invalid_request", error.message))
  }
  if (error.statusCode === 413) {
    return reply.code(413).header("connection", "close").send(
      errorBody(413, "payload_too_large", `the request body exceeds ${MAX_BODY_BYTES} bytes`)
    )
  }
  if (error.statusCode === 415) return reply.code(415).send(errorBody(415, "unsupported_media_type", error.message))
  if (error.statusCode !== undefined && error.statusCode < 500) {
    return reply.code(error.statusCode).send(errorBody(error.statusCode, "invalid_request", error.message))
  }
  return reply.code(500).send(errorBody(500, "internal_error", "the server failed to answer"))
})

app.setNotFoundHandler((request, reply) =>
  reply.code(404).send(errorBody(404, "not_found", `no route for ${request.method} ${request.url}`))
)

app.get("/healthz", () => ({ status: "ok" }))

const DEPRECATION_HEADERS = {
  deprecation: `@${Date.UTC(2026, 10, 21) / 1000}`,
  sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
  link: "</v1/pets>; rel=\"successor-version\""
}

const decodeCursor = (cursor: string): bigint => {
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  const digits = text.startsWith(CURSOR_PREFIX) ? text.slice(CURSOR_PREFIX.length) : ""
  if (!/^(?:0|[1-9]\d*)$/.test(digits)) throw new HttpError(400, "invalid_request", "cursor: is not a cursor this service issued")
  return BigInt(digits)
}

await app.register((pets, _options, done) => {
  pets.addHook("onRequest", authenticate)

  pets.get<{ Querystring: { limit: number; status?: PetStatus; cursor?: string } }>("/v1/pets", {
    schema: { querystring: ListQuerySchema, response: { 200: { type: "array", items: PetSchema }, 400: ErrorSchema } }
  }, async (request, reply) => {
    const { limit, status, cursor } = request.query
    // One extra row tells whether a next page exists without a count query.
    const rows = await store.list({ limit: limit + 1, status, after: cursor === undefined ? undefined : decodeCursor(cursor) })
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    if (rows.length > limit && last !== undefined) {
      const next = new URLSearchParams({ limit: String(limit) })
      if (status !== undefined) next.set("status", status)
      next.set("cursor", Buffer.from(`${CURSOR_PREFIX}${last.id}`, "utf8").toString("base64url"))
      void reply.header("link", `</v1/pets?${next}>; rel="next"`)
    }
    return page
  })

  pets.post<{ Body: { name: string; categoryId: bigint; status?: PetStatus } }>("/v1/pets", {
    schema: { body: NewPetSchema, response: { 201: PetSchema, 400: ErrorSchema } }
  }, async (request, reply) => {
    if (!request.body.name.isWellFormed()) throw new HttpError(400, "invalid_request", "name: must not contain lone surrogates")
    const pet = await store.create(request.body)
    return reply.code(201).header("location", `/v1/pets/${pet.id}`).send(pet)
  })

  pets.get<{ Params: { petId: string } }>("/v1/pets/:petId", {
    schema: { params: PetIdParamsSchema, response: { 200: PetSchema, 404: ErrorSchema } }
  }, async (request, reply) => {
    void reply.headers(DEPRECATION_HEADERS)
    const id = BigInt(request.params.petId)
    if (id < INT64_MIN || id > INT64_MAX) throw new HttpError(400, "invalid_request", "petId: expected an integer")
    const pet = await store.get(id)
    if (pet === undefined) throw new HttpError(404, "not_found", `pet ${id} not found`)
    return pet
  })

  done()
})

await app.listen({ port: args.port, host: "127.0.0.1" })

const shutdown = () => {
  const force = setTimeout(() => process.exit(0), 2_000)
  force.unref()
  void app.close().then(() => store.close()).finally(() => process.exit(0))
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
