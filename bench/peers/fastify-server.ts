/**
 * Fastify 5 peers for the side-by-side HTTP benchmark: Animal Store's three animal
 * operations (list with keyset paging and a Link header, create, get by id) and its
 * bearer check, written the way a Fastify service usually is: JSON schemas validate
 * query, params and body (Ajv), response schemas serialize (fast-json-stringify), one
 * error handler shapes every error as { code, message, status }.
 *
 * int64: request bodies are parsed with a reviver that turns integer literals into
 * BigInt (checked by an `int64` Ajv keyword), the store hands back bigint, and
 * fast-json-stringify writes a bigint under `type: integer` as its exact digits.
 *
 * Two peers in one file, by the `features` argument:
 * - bare Fastify (`features` off): Fastify's defaults (logger off), a 64 KiB body limit;
 * - Fastify + features (`features` on): Animal Store's features done with the ecosystem's
 *   usual plugins, as the fair peer of issue 21: one pino line per request on stdout
 *   (Fastify's logger, request logging narrowed from its two lines to one at the response),
 *   the X-Request-Id kept when sane else a UUID (`genReqId`) and echoed, `@fastify/rate-limit`
 *   keyed by the API key, prom-client's request counter and latency histogram by route,
 *   method and status (and GET /metrics, no key, as Animal Store's), `nosniff` and
 *   `no-store` on every reply, Animal Store's 4 KiB body limit.
 *
 * With the features, `off` leaves some out, each as a Fastify service switches it off
 * (bench/instructions.ts counts what each costs beside Animal Store's own switch): "log",
 * the logger off (the request id stays, as Animal Store's with LOG_LEVEL=none);
 * "rateLimit", @fastify/rate-limit not registered; "metrics", no prom-client (hooks,
 * process figures, /metrics), as Animal Store's METRICS=off records no series.
 *
 * Usage: node bench/peers/fastify-server.ts '{"port":1234,"apiKeys":["k"],"store":"map","features":true}'
 *        (store "pg" needs "databaseUrl"). Listens on 127.0.0.1 only.
 */
import fastifyRateLimit from "@fastify/rate-limit"
import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import type { IncomingMessage } from "node:http"
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest, LogController } from "fastify"
import { collectDefaultMetrics, Counter, Histogram, register } from "prom-client"
import { openStore, peerArgs } from "./peer-args.ts"
import { PET_STATUSES, type PetStatus, type PetStore } from "./pet-store.ts"

const args = peerArgs()
const features = args.features === true
const off = new Set(args.off)
const logged = features && !off.has("log")
const rateLimited = features && !off.has("rateLimit")
const metered = features && !off.has("metrics")

// Animal Store's limit (ErrorResponses.ts) with the features; the bare peer keeps the reference's (wire-rules.ts).
const MAX_BODY_BYTES = features ? 4 * 1024 : 64 * 1024
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/
const CURSOR_PREFIX = "after:"
/** Animal Store's rule (RequestId.ts): short, and safe in a header, a log line and a trace attribute. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:+/=@-]{1,128}$/

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

declare module "fastify" {
  interface FastifyRequest {
    /** Which API key the bearer check accepted: the rate limit's bucket. */
    apiKeyId: string
  }
}

const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest()
const accepted = args.apiKeys.map(digest)
const keyIds = args.apiKeys.map((_key, index) => `key-${index}`)

const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
  const header = request.headers.authorization
  const match = header === undefined ? null : /^Bearer (.+)$/i.exec(header)
  let matched = -1
  if (match !== null) {
    const presented = digest(match[1]!)
    // Every key is compared, so the time taken does not tell which one nearly matched.
    for (const [index, candidate] of accepted.entries()) if (timingSafeEqual(candidate, presented)) matched = index
  }
  if (matched !== -1) {
    request.apiKeyId = keyIds[matched]!
    return undefined
  }
  const message = header === undefined ? "an API key is required" : "the API key is not valid"
  // Returning the reply ends the request here; async hooks must not also call done.
  return reply.code(401).header("www-authenticate", `Bearer realm="animal-store"`).send(errorBody(401, "unauthorized", message))
}

/**
 * Fastify's request logging, one line per request: its default writes two (incoming,
 * completed); this keeps the completed one, with the request's method, URL and peer on it.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { req: request, res: reply, responseTime: reply.elapsedTime }
    if (error !== null && error !== undefined) reply.log.error({ ...line, err: error }, "request errored")
    else if (reply.statusCode >= 500) reply.log.error(line, "request completed")
    else reply.log.info(line, "request completed")
  }
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
  },
  ...(features
    ? {
      // pino on stdout at info.
      ...(logged ? { logger: { level: "info" }, logController: new OneLinePerRequest() } : {}),
      // requestIdHeader would take any header value as it comes; genReqId applies the rule itself.
      requestIdHeader: false,
      genReqId: (request: IncomingMessage) => {
        const sent = request.headers["x-request-id"]
        return typeof sent === "string" && SANE_REQUEST_ID.test(sent) ? sent : randomUUID()
      }
    } as const
    : {})
})
app.decorateRequest("apiKeyId", "")

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

if (features) {
  // Set on the way in, so every answer has them, errors and 404s included.
  app.addHook("onRequest", (request, reply, done) => {
    void reply.headers({
      "x-request-id": request.id,
      "x-content-type-options": "nosniff",
      "cache-control": "no-store"
    })
    done()
  })
}

if (metered) {
  const requests = new Counter({
    name: "http_server_requests_total",
    help: "HTTP requests answered, by route, method and status.",
    labelNames: ["route", "method", "status"] as const
  })
  const durations = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "Time from the request's arrival to its response, by route, method and status.",
    labelNames: ["route", "method", "status"] as const,
    // Animal Store's buckets (HttpMetrics.ts): 0.5 ms to 10 s.
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
  })
  // The process figures (memory, event-loop delay, GC), as Animal Store's /metrics has some.
  collectDefaultMetrics()

  app.addHook("onResponse", (request, reply, done) => {
    // The route pattern, never the raw path: raw paths would make unbounded series.
    const labels = { route: request.routeOptions.url ?? "unmatched", method: request.method, status: reply.statusCode }
    requests.inc(labels)
    durations.observe(labels, reply.elapsedTime / 1000)
    done()
  })

  app.get("/metrics", async (_request, reply) => reply.type(register.contentType).send(await register.metrics()))
}

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

await app.register(async (pets) => {
  pets.addHook("onRequest", authenticate)
  if (rateLimited) {
    // Route hooks run after the scope's: the key is known when the limit is drawn.
    await pets.register(fastifyRateLimit, {
      // A quota no run reaches, as Animal Store's in the bench (BENCH_RATE_LIMIT): every request draws, none is refused.
      max: 100_000_000,
      timeWindow: 1_000,
      keyGenerator: (request) => request.apiKeyId,
      enableDraftSpec: true,
      errorResponseBuilder: (_request, context) =>
        new HttpError(429, "rate_limited", `too many requests with this API key; retry in ${context.after}`)
    })
  }

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
})

await app.listen({ port: args.port, host: "127.0.0.1" })

const shutdown = () => {
  const force = setTimeout(() => process.exit(0), 2_000)
  force.unref()
  void app.close().then(() => store.close()).finally(() => process.exit(0))
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
