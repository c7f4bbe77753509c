/**
 * Schema-driven fuzzing of the HTTP adapter: the real router, middleware and handlers, in
 * process (TestServer), over an in-memory store that each case starts afresh.
 *
 * Every response, whatever the request, must:
 * - never be a 5xx (the memory store never makes the documented 503);
 * - if not 2xx, carry exactly `{code, message, status}` with a documented code whose status
 *   is the HTTP status (HEAD: no body, JSON content type);
 * - leak no stack trace, source location or internal name (what the request itself put
 *   in a message, such as its path, is not a leak);
 * - leave the store as it was, except a 201, which adds exactly the pet it echoes, a 200 to
 *   a patch, which replaces the pet by the one it echoes, and a 204 to a delete, which
 *   removes the pet;
 * - if 2xx, come from a documented operation and validate against its wire schema, every
 *   pet in it being the stored one.
 * Requests whose outcome the README fixes (valid creates, lists, gets, patches, deletes, and refusals) must
 * also get that outcome.
 *
 * Each run uses a new random seed. A failure prints the seed, the shrunk case and the
 * failing exchange; `FUZZ_SEED=<seed>` replays the same run, shrinking included:
 *
 *   FUZZ_SEED=123456 npx vitest run test/adapters/http/Fuzz.test.ts -t "<test name>"
 */
import { randomInt } from "node:crypto"
import { Arbitrary, Effect, Formatter, Layer, Schema } from "effect"
import { afterAll, describe, it } from "vitest"
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from "../../../src/adapters/http/api/ApiErrors.ts"
import { LosslessJsonBody } from "../../../src/adapters/http/api/JsonInt64.ts"
import { PetJson, PetsJson } from "../../../src/adapters/http/api/PetsApi.ts"
import { SUNSET } from "../../../src/adapters/http/api/Sunset.ts"
import * as OrderRepositoryMemory from "../../../src/adapters/memory/orders/OrderRepositoryMemory.ts"
import { OrderTable } from "../../../src/adapters/memory/orders/OrderTable.ts"
import * as PetRepositoryMemory from "../../../src/adapters/memory/pets/PetRepositoryMemory.ts"
import { EventTable } from "../../../src/adapters/memory/events/EventTable.ts"
import { PetTable } from "../../../src/adapters/memory/pets/PetTable.ts"
import type { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { OrderRepository } from "../../../src/ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import {
  bodyBytes,
  type ExpectedPet,
  type FuzzRequest,
  headerRecord,
  HostileBodyRequest,
  HostileHeaderRequest,
  HostileTargetRequest,
  InitialPets,
  ValidRequest
} from "./HostileRequests.ts"
import { type CallResult, makeTestServer } from "./TestServer.ts"

const SEED = (() => {
  const fromEnv = process.env["FUZZ_SEED"]
  if (fromEnv === undefined || fromEnv === "") return randomInt(2 ** 31)
  if (!/^\d+$/.test(fromEnv)) throw new Error(`FUZZ_SEED must be a non-negative integer, got ${JSON.stringify(fromEnv)}`)
  return Number(fromEnv)
})()

// ---------------------------------------------------------------------------------------------
// One app for the whole file; its store is swapped for a fresh one at the start of each case,
// so that a case's outcome depends on nothing but the case (shrinking and replay need that).

type Store = typeof PetRepository.Service
type Orders = typeof OrderRepository.Service
type Method = (...args: ReadonlyArray<unknown>) => unknown

// The pets and the orders of one memory store, over shared tables as StoreMemory builds them.
let orders: Orders
const freshStore = (): Store => {
  const pets = new PetTable()
  const orderTable = new OrderTable()
  const events = new EventTable()
  orders = OrderRepositoryMemory.fromTables(pets, orderTable, events)
  return PetRepositoryMemory.fromTables(pets, events, (id) => orderTable.hasOpen(id))
}
let store = freshStore()

// Every member of a port, bound late to the current store: methods when called, Effect
// values when run (the app may keep those from its start). Built from the members a store
// has, so that the port can grow without this file changing.
const lateBound = <S extends object>(current: () => S): S =>
  Object.fromEntries(
    Object.entries(current()).map(([key, member]) => [
      key,
      Effect.isEffect(member)
        ? Effect.suspend(() => current()[key as keyof S] as Effect.Effect<unknown, unknown>)
        : (...args: ReadonlyArray<unknown>) => (current()[key as keyof S] as Method)(...args)
    ])
  ) as S

const swappableStore = Layer.mergeAll(
  Layer.succeed(PetRepository, lateBound(() => store)),
  Layer.succeed(OrderRepository, lateBound(() => orders))
)

const server = makeTestServer(swappableStore)
afterAll(() => server.dispose())

interface StoredPet {
  readonly id: bigint
  readonly name: string
  readonly categoryId: bigint
  readonly status?: string | undefined
  readonly tags: ReadonlyArray<string>
}

const stored = (): ReadonlyArray<StoredPet> => Effect.runSync(store.list({ limit: Number.MAX_SAFE_INTEGER }))

const petText = (pet: StoredPet) =>
  `{id: ${pet.id}, name: ${JSON.stringify(pet.name)}, categoryId: ${pet.categoryId}, status: ${pet.status ?? "(none)"}, ` +
  `tags: ${JSON.stringify(pet.tags)}}`
const samePet = (a: StoredPet, b: StoredPet) => petText(a) === petText(b)
const samePets = (a: ReadonlyArray<StoredPet>, b: ReadonlyArray<StoredPet>) =>
  a.length === b.length && a.every((pet, i) => samePet(pet, b[i]!))
const matchesExpected = (pet: StoredPet, expected: ExpectedPet) =>
  pet.name === expected.name && pet.categoryId === expected.categoryId && pet.status === expected.status &&
  JSON.stringify(pet.tags) === JSON.stringify(expected.tags ?? [])

// ---------------------------------------------------------------------------------------------
// The properties

const utf8 = new TextEncoder()
// Strict: a field the wire schema does not name (an internal `_tag`, say) is a failure too.
const STRICT = { onExcessProperty: "error" } as const
const decodePet = Schema.decodeUnknownSync(LosslessJsonBody(PetJson))
const decodePets = Schema.decodeUnknownSync(LosslessJsonBody(PetsJson))

// What internals look like in a body: stack frames, source files, paths, error classes, tags.
const LEAKS: ReadonlyArray<readonly [string, RegExp]> = [
  ["a stack frame", /(?:^|\n)\s*at\s|\bat\s+\S+\s+\(|:\d+:\d+\)/],
  ["a source file", /\.[cm]?[jt]sx?(?::\d|\b)/],
  ["a file path", /node_modules|file:\/\/|\/(?:work|src|home|usr|tmp|app)\//],
  ["an error class", /Error\b|Exception\b/],
  ["an internal tag", /_tag|\bFiber|\bCause\b|\[object |\bundefined\b/]
]

// Fetch upper-cases these methods whatever their case; the app sees the result.
const FETCH_NORMALIZED = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]
const methodSeen = (method: string) =>
  FETCH_NORMALIZED.includes(method.toUpperCase()) ? method.toUpperCase() : method

// As TestServer builds the URL, so that `//x` stays a path and is not read as a host.
const pathSeen = (target: string) => new URL(`http://localhost${target}`).pathname

/** The path of a target as the router reads it. */
const routedPath = (target: string) => {
  let path = pathSeen(target)
  try {
    path = decodeURIComponent(path)
  } catch {
    // An undecodable path stays as it is; it matches no operation.
  }
  // The router ends a path at ";" too, ignores case, repeated and trailing slashes.
  return path.split(";")[0]!.toLowerCase().replace(/\/+/g, "/").replace(/(.)\/$/, "$1")
}

/** The documented operation a path and method name, matched as leniently as the router does. */
const operationOf = (method: string, target: string) => {
  const path = routedPath(target)
  const read = method === "GET" || method === "HEAD"
  if (path === "/v1/pets") return method === "POST" ? "createPet" : read ? "listPets" : undefined
  if (/^\/v1\/pets\/[^/]+$/.test(path)) {
    return read ? "getPet" : method === "PATCH" ? "updatePet" : method === "DELETE" ? "deletePet" : undefined
  }
  // The store area: its bodies are checked by its own tests; here, that it answers documented operations.
  if (path === "/v1/store/orders") return method === "POST" ? "store" : read ? "store" : undefined
  if (/^\/v1\/store\/orders\/[^/]+$/.test(path)) return read ? "store" : undefined
  if (/^\/v1\/store\/orders\/[^/]+\/(?:approve|deliver|cancel)$/.test(path)) return method === "POST" ? "store" : undefined
  const others: Partial<Record<string, "health" | "ready" | "openapi" | "docs" | "metrics" | "store">> = {
    "/healthz": "health",
    "/readyz": "ready",
    "/v1/openapi.json": "openapi",
    "/docs": "docs",
    "/metrics": "metrics",
    "/v1/store/inventory": "store"
  }
  return read ? others[path] : undefined
}

const INTEGER_LITERAL = /^-?\d+$/
const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * The pet fields a request body states, read independently of the server: strict UTF-8 (a
 * leading BOM dropped, as TextDecoder does), JSON with integers kept exact.
 */
const sentFields = (request: FuzzRequest): ExpectedPet | undefined => {
  if (request.body === undefined) return undefined
  try {
    const document: unknown = JSON.parse(
      strictUtf8.decode(bodyBytes(request.body)),
      (_key: string, value: unknown, context?: { readonly source?: string }) =>
        typeof value === "number" && INTEGER_LITERAL.test(context?.source ?? "") ? BigInt(context!.source!) : value
    )
    return typeof document === "object" && document !== null ? document as ExpectedPet : undefined
  } catch {
    return undefined
  }
}

const messageOf = (error: unknown) => error instanceof Error ? error.message : String(error)

const isJson = (response: CallResult) => response.headers.get("content-type") === "application/json"

/** Every documented property of one exchange; returns what broke (empty when nothing did). */
const problemsOf = (
  request: FuzzRequest,
  response: CallResult,
  before: ReadonlyArray<StoredPet>,
  after: ReadonlyArray<StoredPet>,
  lastId: bigint
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const method = methodSeen(request.method)
  const head = method === "HEAD"
  const { status, text } = response
  const success = status >= 200 && status < 300

  if (status >= 500) problems.push(`a ${status}: no request may cause a server error`)

  // The Error body, and no internals in it.
  if (!success) {
    if (!isJson(response)) problems.push(`error content-type is ${response.headers.get("content-type")}`)
    if (head) {
      if (text !== "") problems.push("a HEAD response has a body")
    } else {
      const error = response.json as Record<string, unknown> | undefined
      const keys = typeof error === "object" && error !== null
        ? Object.keys(error).sort().join(",")
        : "(not an object)"
      if (keys !== "code,message,status") problems.push(`error body keys are ${keys}, not code,message,status`)
      else {
        const { code, message, status: bodyStatus } = error!
        if (!ERROR_CODES.includes(code as never)) problems.push(`undocumented error code ${JSON.stringify(code)}`)
        else if (ERROR_STATUS[code as ErrorCode] !== status) {
          problems.push(`code ${String(code)} is documented with status ${ERROR_STATUS[code as ErrorCode]}`)
        }
        if (bodyStatus !== status) problems.push(`body status ${JSON.stringify(bodyStatus)} is not ${status}`)
        if (typeof message !== "string" || message === "") problems.push("message is not a non-empty string")
      }
      // What the request put in the message is the client's own text, not a leak.
      const echoes = [pathSeen(request.target), method, headerRecord(request.headers)["content-type"]]
      const own = echoes.reduce<string>((t, echo) => echo === undefined || echo === "" ? t : t.replaceAll(echo, ""), text)
      for (const [what, pattern] of LEAKS) if (pattern.test(own)) problems.push(`the body shows ${what} (${pattern})`)
    }
  }

  // The store: only a 201 changes it, by exactly the pet it echoes.
  let created: StoredPet | undefined
  if (status === 201) {
    try {
      created = decodePet(utf8.encode(text), STRICT)
    } catch (error) {
      problems.push(`the 201 body is not a Pet: ${messageOf(error)}`)
    }
    if (created !== undefined) {
      const sent = sentFields(request)
      if (sent === undefined) problems.push("a 201 for a body that is not a JSON object")
      else if (!matchesExpected(created, sent)) {
        problems.push(`stored ${petText(created)}, but the body said ${Formatter.format(sent)}`)
      }
      const nextId = lastId + 1n
      if (created.id !== nextId) problems.push(`created id ${created.id}, expected the next id ${nextId}`)
      if (!samePets(after, [...before, created])) problems.push("the store is not the previous store plus the echoed pet")
      if (response.headers.get("location") !== `/v1/pets/${created.id}`) {
        problems.push(`Location is ${response.headers.get("location")}`)
      }
    }
  } else if (status === 200 && operationOf(method, request.target) === "updatePet") {
    let patched: StoredPet | undefined
    try {
      patched = decodePet(utf8.encode(text), STRICT)
    } catch (error) {
      problems.push(`the patch's 200 body is not a Pet: ${messageOf(error)}`)
    }
    if (patched !== undefined) {
      const old = before.find((pet) => pet.id === patched.id)
      const sent = sentFields(request) as Record<string, unknown> | undefined
      if (old === undefined) problems.push(`a 200 patch of pet ${patched.id}, which was not stored`)
      else if (sent === undefined) problems.push("a 200 for a patch that is not a JSON object")
      else {
        const expected = {
          name: "name" in sent ? sent["name"] : old.name,
          categoryId: "categoryId" in sent ? sent["categoryId"] : old.categoryId,
          status: "status" in sent ? sent["status"] ?? undefined : old.status,
          tags: "tags" in sent ? sent["tags"] : old.tags
        } as ExpectedPet
        if (!matchesExpected(patched, expected)) problems.push(`patched to ${petText(patched)}, but the patch said ${Formatter.format(sent)}`)
      }
      if (!samePets(after, before.map((pet) => pet.id === patched.id ? patched : pet))) {
        problems.push("the store is not the previous store with the echoed pet in place")
      }
    }
  } else if (status === 204 && operationOf(method, request.target) === "deletePet") {
    const id = routedPath(request.target).split("/").pop()
    if (text !== "") problems.push("a 204 has a body")
    if (!samePets(after, before.filter((pet) => String(pet.id) !== id))) problems.push("the 204 did not remove exactly the pet")
    if (after.length !== before.length - 1) problems.push("a 204 for a pet that was not stored")
  } else if (!samePets(before, after)) {
    problems.push(`a ${status} changed the store`)
  }

  // A 2xx is a documented operation's answer and validates against its wire schema.
  let body: ReadonlyArray<StoredPet> | undefined
  if (success) {
    const operation = operationOf(method, request.target)
    const expectedStatus = operation === "createPet"
      ? 201
      : operation === "deletePet"
      ? 204
      : operation === "store" && status === 201
      ? 201
      : 200
    if (operation === undefined) problems.push(`a ${status} from no documented operation`)
    else if (status !== expectedStatus) problems.push(`${operation} answered ${status}, not ${expectedStatus}`)
    if (head || status === 204) {
      if (text !== "") problems.push(`a ${head ? "HEAD" : "204"} response has a body`)
    } else {
      try {
        switch (operation) {
          case "updatePet":
            body = [decodePet(utf8.encode(text), STRICT)]
            break
          case "listPets": {
            const page = decodePets(utf8.encode(text), STRICT)
            body = page
            if (page.length > 100) problems.push(`a page of ${page.length} pets`)
            page.forEach((pet, i) => {
              const own = after.find((p) => p.id === pet.id)
              if (own === undefined || !samePet(own, pet)) problems.push(`listed ${petText(pet)} is not stored as such`)
              if (i > 0 && page[i - 1]!.id >= pet.id) problems.push("the page is not in ascending id order")
            })
            break
          }
          case "getPet": {
            const pet = decodePet(utf8.encode(text), STRICT)
            body = [pet]
            const own = after.find((p) => p.id === pet.id)
            if (own === undefined || !samePet(own, pet)) problems.push(`fetched ${petText(pet)} is not stored as such`)
            break
          }
          case "health":
          case "ready":
            // The body may say more (checks, versions); its status is what the probe reads.
            const probe = (response.json as { status?: unknown } | undefined)?.status
            if (probe !== { health: "ok", ready: "ready" }[operation]) {
              problems.push(`${operation} body is ${text}`)
            }
            break
          case "openapi":
            if (!/^3\.1\.\d+$/.test(String((response.json as { openapi?: unknown } | undefined)?.openapi))) {
              problems.push("openapi.json is not an OpenAPI 3.1 document")
            }
            break
          case "docs":
            if (!(response.headers.get("content-type") ?? "").startsWith("text/html")) problems.push("docs are not HTML")
            break
          case "metrics":
            if (!(response.headers.get("content-type") ?? "").startsWith("text/plain")) problems.push("metrics are not text")
        }
      } catch (error) {
        problems.push(`the ${operation} body does not validate: ${messageOf(error)}`)
      }
      if (operation !== "docs" && operation !== "metrics" && operation !== undefined && !isJson(response)) {
        problems.push(`content-type is ${response.headers.get("content-type")}`)
      }
    }
  }

  // The outcomes the README fixes for this request.
  const expect = request.expect
  switch (expect.kind) {
    case "created":
      if (status !== 201) problems.push(`a valid create answered ${status}, not 201`)
      else if (created !== undefined && !matchesExpected(created, expect.pet)) {
        problems.push(`stored ${petText(created)}, but the request said ${Formatter.format(expect.pet)}`)
      }
      break
    case "listed": {
      const matching = before.filter((pet) =>
        (expect.status === undefined || pet.status === expect.status) &&
        (expect.after === undefined || pet.id > expect.after)
      )
      const page = matching.slice(0, expect.limit)
      if (status !== 200) problems.push(`a valid list answered ${status}, not 200`)
      else if (body !== undefined) {
        const ids = body.map((pet) => pet.id).join(",")
        const expectedIds = page.map((pet) => pet.id).join(",")
        if (ids !== expectedIds) problems.push(`listed ids [${ids}], expected [${expectedIds}]`)
      }
      const hasNext = response.headers.get("link")?.includes(`rel="next"`) ?? false
      if (status === 200 && hasNext !== matching.length > expect.limit) {
        problems.push(`Link rel="next" ${hasNext ? "present" : "missing"} with ${matching.length} matching pets`)
      }
      break
    }
    case "fetched": {
      const exists = before.some((pet) => pet.id === expect.id)
      const expectedStatus = Date.now() >= SUNSET.epochMillis ? 410 : exists ? 200 : 404
      if (status !== expectedStatus) problems.push(`a get of ${exists ? "a stored" : "an unknown"} id answered ${status}`)
      else if (body !== undefined && body[0]?.id !== expect.id) problems.push(`asked for pet ${expect.id}, got another`)
      break
    }
    case "patched":
    case "deleted": {
      const exists = before.some((pet) => pet.id === expect.id)
      const expectedStatus = exists ? (expect.kind === "patched" ? 200 : 204) : 404
      if (status !== expectedStatus) problems.push(`a ${expect.kind} request of ${exists ? "a stored" : "an unknown"} id answered ${status}`)
      else if (body !== undefined && body[0]?.id !== expect.id) problems.push(`patched pet ${expect.id}, got another`)
      break
    }
    case "refused":
      if (status < 400 || status >= 500) problems.push(`a request the README refuses answered ${status}`)
      break
    case "any":
  }
  return problems
}

// ---------------------------------------------------------------------------------------------
// Running cases

interface Case {
  readonly pets: ReadonlyArray<NewPet>
  readonly requests: ReadonlyArray<FuzzRequest>
}

const clip = (s: string, max = 600) => s.length <= max ? s : `${s.slice(0, max)}… (${s.length} characters)`

const describeBody = (bytes: Uint8Array) => {
  try {
    return `${bytes.length} bytes, as text: ${clip(JSON.stringify(strictUtf8.decode(bytes)))}`
  } catch {
    return `${bytes.length} bytes, not UTF-8: ${clip(Buffer.from(bytes).toString("hex"))}`
  }
}

const describeExchange = (request: FuzzRequest, response: CallResult) => {
  const headers = JSON.stringify(headerRecord(request.headers), (_, v) => typeof v === "string" ? clip(v, 200) : v)
  const body = request.body === undefined ? "(none)" : describeBody(bodyBytes(request.body))
  const responseHeaders = clip(JSON.stringify(Object.fromEntries(response.headers)), 400)
  return [
    `request:  ${request.method} ${clip(JSON.stringify(request.target), 300)}`,
    `  headers: ${headers}`,
    `  body: ${body}`,
    `  expected: ${Formatter.format(request.expect)}`,
    `response: ${response.status} ${responseHeaders}`,
    `  body: ${clip(JSON.stringify(response.text))}`
  ].join("\n")
}

/** Runs a case on a fresh store; fails with every broken property of the first bad exchange. */
const runCase = async ({ pets, requests }: Case): Promise<boolean> => {
  store = freshStore()
  for (const pet of pets) Effect.runSync(store.create(pet))
  // The highest id assigned so far: a deleted pet's id is not assigned again.
  let lastId = BigInt(pets.length)
  for (const [index, request] of requests.entries()) {
    const before = stored()
    const response = await server.call(request.method, request.target, {
      headers: headerRecord(request.headers),
      body: request.body === undefined ? undefined : bodyBytes(request.body)
    })
    const after = stored()
    const problems = problemsOf(request, response, before, after, lastId)
    lastId = after.reduce((max, pet) => pet.id > max ? pet.id : max, lastId)
    if (problems.length > 0) {
      throw new Error(
        `request ${index + 1} of ${requests.length}, on a store of ${before.length} pets:\n` +
          `${problems.map((p) => `  - ${p}`).join("\n")}\n${describeExchange(request, response)}`
      )
    }
  }
  return true
}

// A case's shrink candidates each rerun it; this bounds the time a failure takes to report.
const MAX_SHRINKS = 150
// Generous for a loaded 2-core machine; a passing file takes a fraction of it.
const TIMEOUT_MS = 120_000

/** Checks `runs` cases, each 1 to `maxRequests` requests on 0 to 5 stored pets. */
const fuzz = (name: string, requests: Arbitrary.Arbitrary<FuzzRequest>, runs: number, maxRequests: number) =>
  it(name, async () => {
    const cases = Arbitrary.all({
      pets: InitialPets,
      requests: Arbitrary.array(requests, { minLength: 1, maxLength: maxRequests })
    })
    const result = await Effect.runPromise(
      Arbitrary.checkEffect(
        cases,
        (c) => Effect.tryPromise({ try: () => runCase(c), catch: messageOf }),
        { runs, seed: SEED, maxShrinks: MAX_SHRINKS }
      )
    )
    if (result._tag === "Falsified") {
      throw new Error(
        `${name}: falsified after ${result.runs} case(s), shrunk ${result.shrinks} time(s); seed ${SEED}\n` +
          `Shrunk case: ${clip(Formatter.format(result.shrunkInput, { space: 2 }), 6_000)}\n` +
          `Failure: ${result.failure._tag === "PropertyError" ? result.failure.error : "returned false"}\n` +
          `Replay: FUZZ_SEED=${SEED} npx vitest run test/adapters/http/Fuzz.test.ts -t ${JSON.stringify(name)}`
      )
    }
    const failure = Arbitrary.formatCheckFailure(result)
    if (failure !== undefined) throw new Error(`${name}: ${failure}\nseed ${SEED}`)
  }, TIMEOUT_MS)

// 5,000 cases in all. Valid traffic gets longer sequences, where a create meets the gets and
// lists after it; a hostile request needs at most a valid one beside it.
describe("HTTP fuzzing (in process, memory store)", () => {
  fuzz("valid requests from the wire and domain schemas get their documented outcome", ValidRequest, 1_300, 3)
  fuzz("hostile create bodies are refused or stored exactly, never crash", HostileBodyRequest, 1_300, 2)
  fuzz("hostile header fields on valid requests", HostileHeaderRequest, 1_200, 2)
  fuzz("any method, path and query, with or without a key", HostileTargetRequest, 1_200, 2)
})
