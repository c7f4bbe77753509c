/**
 * The OpenAPI document and the running service agree, both ways. Requests are generated
 * from the document's own schemas (bodies, path and query parameters), valid and broken;
 * an OpenAPI validator (openapi-backend) says which of them the document allows; the
 * real service, over real HTTP, must then answer a documented non-400 status to every
 * allowed one and 400 to every other, and every answer must be one the document
 * promises (status, body schema, headers). A failure prints its seed:
 * `CONFORMANCE_SEED=<seed> npx vitest run test/e2e/conformance.test.ts` replays it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { checkRequest, expectDocumentedResponse } from "../adapters/http/OpenApiValidator.ts"
import { killAll, type ServiceProcess, startService } from "./ServiceProcess.ts"
import { mulberry32 } from "./Mulberry32.ts"

type Json = Record<string, any>

const API_KEY = "conformance-key"
const CASES = 700
const SEED = Number(process.env["CONFORMANCE_SEED"] ?? Math.floor(Math.random() * 2 ** 31))

let service: ServiceProcess
let doc: Json

beforeAll(async () => {
  service = await startService({ env: { STORE: "memory", API_KEYS: API_KEY } })
  doc = (await service.request("GET", "/v1/openapi.json")).json as Json
}, 60_000)

afterAll(killAll)

/** Choices from a seeded sequence, so that a seed replays a run. */
const random = (seed: number) => {
  const next = mulberry32(seed)
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  const pick = <A>(items: ReadonlyArray<A>): A => items[int(0, items.length - 1)]!
  return { next, int, pick, chance: (p: number) => next() < p }
}
type Random = ReturnType<typeof random>

const resolve = (schema: Json): Json =>
  typeof schema["$ref"] === "string"
    ? resolve(schema["$ref"].slice(2).split("/").reduce((node: Json, key: string) => node[key], doc))
    : schema

// Characters a string may be made of: letters, astral, blanks, controls, lone surrogates.
const CHARACTERS = ["a", "Z", "é", "😀", " ", "\u00a0", "\u3000", "\t", "\n", "\u0001", "\u007f", "\u0085", "\u200b", "\ud800"]

const stringOf = (r: Random, length: number) => Array.from({ length }, () => r.pick(CHARACTERS)).join("")

/** A value for `schema`, built from its keywords: mostly within them, the validator decides. */
const sample = (r: Random, schema: Json): unknown => {
  const s = resolve(schema)
  if (s["const"] !== undefined) return s["const"]
  if (Array.isArray(s["enum"])) return r.pick(s["enum"])
  switch (s["type"]) {
    case "integer": {
      const min = s["minimum"] ?? -1000
      const max = s["maximum"] ?? 1000
      return r.chance(0.9) ? r.int(min, max) : r.pick([min, max, 2 ** 53 - 1])
    }
    case "boolean":
      return r.chance(0.5)
    case "string": {
      const max = Math.min(s["maxLength"] ?? 20, 300)
      const min = s["minLength"] ?? 0
      // Mostly plain names; sometimes anything from the characters above.
      return r.chance(0.7) ? `${r.pick(["Rex", "Fido", " Nala ", "😀"])}${"x".repeat(r.int(0, 3))}` : stringOf(r, r.int(min, max))
    }
    case "array":
      return Array.from({ length: r.int(0, 2) }, () => sample(r, s["items"]))
    case "object": {
      const value: Json = {}
      for (const [name, property] of Object.entries<Json>(s["properties"] ?? {})) {
        if ((s["required"] ?? []).includes(name) || r.chance(0.5)) value[name] = sample(r, property)
      }
      // Unknown fields, a client-supplied id among them.
      if (r.chance(0.3)) value[r.pick(["id", "extra", "tags"])] = r.pick([7, "x", [1], { a: 1 }])
      return value
    }
    default:
      return null
  }
}

/** A value that breaks one of `schema`'s keywords (or, by chance, none: the validator decides). */
const breakValue = (r: Random, schema: Json): unknown => {
  const s = resolve(schema)
  const wrongType = () => r.pick<unknown>(s["type"] === "string" ? [42, null, true, ["x"]] : ["12", 1.5, null, true, {}])
  if (s["type"] === "object") {
    const value = sample(r, s) as Json
    const names = Object.keys(s["properties"] ?? {})
    const name = r.pick(names)
    if (r.chance(0.3) && (s["required"] ?? []).includes(name)) delete value[name]
    else value[name] = breakValue(r, s["properties"][name])
    return value
  }
  const breaks: Array<() => unknown> = [wrongType]
  if (Array.isArray(s["enum"]) || s["const"] !== undefined) breaks.push(() => "unknown", () => 2)
  if (s["minimum"] !== undefined) breaks.push(() => s["minimum"] - r.int(1, 5))
  if (s["maximum"] !== undefined) breaks.push(() => s["maximum"] + r.int(1, 5))
  if (s["minLength"] !== undefined) breaks.push(() => "")
  if (s["maxLength"] !== undefined) breaks.push(() => "y".repeat(s["maxLength"] + r.int(1, 3)))
  if (s["pattern"] !== undefined) breaks.push(() => r.pick([" ", "\u3000\t", "a\u0000b", "x\n", "\ud800y"]))
  return r.pick(breaks)()
}

/** A path or query parameter's text: a valid value serialized, or a broken one. */
const parameterText = (r: Random, schema: Json, broken: boolean): string => {
  if (!broken) return String(sample(r, schema))
  return r.pick([String(breakValue(r, schema)), "abc", "1.5", "-"])
}

interface Case {
  readonly method: string
  readonly url: string
  readonly body?: unknown
}

/** One request for an operation of the document. */
const makeCase = (r: Random, path: string, method: string, op: Json, knownIds: ReadonlyArray<number>): Case => {
  let url = `/v1${path}`
  const query = new URLSearchParams()
  for (const parameter of (op["parameters"] ?? []) as Array<Json>) {
    // A cursor is opaque: only one the service issued (in a Link) means anything.
    if (parameter["name"] === "cursor") continue
    const broken = r.chance(0.25)
    if (parameter["in"] === "path") {
      const text = !broken && knownIds.length > 0 && r.chance(0.5) ? String(r.pick(knownIds)) : parameterText(r, parameter["schema"], broken)
      // An empty segment would name another path (`/pets/` is the list), not a bad id.
      url = url.replace(`{${parameter["name"]}}`, encodeURIComponent(text === "" ? "x" : text))
    } else if (parameter["in"] === "query" && (broken || r.chance(0.5))) {
      query.set(parameter["name"], parameterText(r, parameter["schema"], broken))
    }
  }
  if (query.size > 0) url += `?${query}`
  const bodySchema = op["requestBody"]?.["content"]?.["application/json"]?.["schema"]
  if (bodySchema === undefined) return { method, url }
  const body = r.chance(0.5) ? sample(r, bodySchema) : breakValue(r, bodySchema)
  // Orders for pets that exist, sometimes, so that 201s happen too.
  if (typeof body === "object" && body !== null && "petId" in body && knownIds.length > 0 && r.chance(0.5)) {
    ;(body as Json)["petId"] = r.pick(knownIds)
  }
  return { method, url, body }
}

describe("the OpenAPI document and the service agree", () => {
  it(`on ${CASES} requests generated from the document's schemas (seed ${SEED})`, async () => {
    const r = random(SEED)
    // The operations with no body or a JSON one: an upload's image bytes or form are not
    // generated from a schema (test/adapters/http/PhotoFuzz.test.ts mutates real images).
    const operations = Object.entries<Json>(doc["paths"]).flatMap(([path, item]) =>
      Object.entries<Json>(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op }))
    ).filter(({ op }) => op["requestBody"] === undefined || op["requestBody"]["content"]["application/json"] !== undefined)
    // The pets that exist at some point; those the run creates join them, as deletes remove some.
    const knownIds = [1, 2, 3]
    for (const id of knownIds) {
      const created = await service.request("POST", "/v1/pets", { apiKey: API_KEY, body: { name: `Pet ${id}`, categoryId: id, status: "available" } })
      expect(created.status).toBe(201)
    }
    const tally = { allowed: 0, refused: 0, statuses: new Map<string, number>() }
    for (let i = 0; i < CASES; i++) {
      const { path, method, op } = r.pick(operations)
      const c = makeCase(r, path, method, op, knownIds)
      const headers: Record<string, string> = { authorization: `Bearer ${API_KEY}` }
      if (c.body !== undefined) headers["content-type"] = "application/json"
      const verdict = await checkRequest({ method: c.method, url: c.url, headers, body: c.body })
      const response = await service.request(c.method, c.url, { apiKey: API_KEY, body: c.body })
      const where = `seed ${SEED}, case ${i}: ${c.method} ${c.url} ${JSON.stringify(c.body) ?? ""} → ${response.status} ${response.text}`
      expect(verdict.operationId, where).toBe(op["operationId"])
      if (verdict.valid) {
        tally.allowed++
        // The one refusal the document cannot foresee: a webhook URL whose host does not
        // resolve to public addresses (the document says so in words).
        const hostRefused = op["operationId"] === "createWebhook" &&
          /^url: .*(resolve|address)/.test((response.json as { message?: string } | undefined)?.message ?? "")
        if (!hostRefused) expect(response.status, `allowed by the document, refused by the service: ${where}`).not.toBe(400)
        expect(response.status, where).toBeLessThan(500)
      } else {
        tally.refused++
        // A photo URL's signature, when present, decides before its input is read (as a key's
        // check does): a generated one is never valid, so 403.
        const signed = op["operationId"] === "getPetPhotoRendition" && new URL(c.url, "http://x").searchParams.has("signature")
        expect(response.status, `refused by the document (${verdict.errors}), not by the service: ${where}`).toBe(signed ? 403 : 400)
      }
      await expectDocumentedResponse({ method: c.method, url: c.url }, response)
      if (op["operationId"] === "createPet" && response.status === 201) knownIds.push((response.json as { id: number }).id)
      const key = `${op["operationId"]} ${response.status}`
      tally.statuses.set(key, (tally.statuses.get(key) ?? 0) + 1)
    }
    // Both kinds were really exercised, and successes among them.
    expect(tally.allowed).toBeGreaterThan(CASES / 4)
    expect(tally.refused).toBeGreaterThan(CASES / 4)
    expect([...tally.statuses.keys()]).toEqual(expect.arrayContaining(["createPet 201", "listPets 200"]))
    // An order, an edit and a retirement that succeed, whatever the draw gave (random ones
    // are mostly refused, so their successes are not seen under every seed), checked
    // against the document.
    const pet = await service.request("POST", "/v1/pets", { apiKey: API_KEY, body: { name: "Conformed", categoryId: 1, status: "available" } })
    const petId = (pet.json as { id: number }).id
    const petUrl = `/v1/pets/${petId}`
    const order = await service.request("POST", "/v1/store/orders", { apiKey: API_KEY, body: { petId } })
    expect(order.status).toBe(201)
    await expectDocumentedResponse({ method: "POST", url: "/v1/store/orders" }, order)
    const orderUrl = `/v1/store/orders/${(order.json as { id: number }).id}`
    expect((await service.request("POST", `${orderUrl}/cancel`, { apiKey: API_KEY })).status).toBe(200)
    const patched = await service.request("PATCH", petUrl, { apiKey: API_KEY, body: { name: "Conformed again", status: null } })
    expect(patched.status).toBe(200)
    await expectDocumentedResponse({ method: "PATCH", url: petUrl }, patched)
    const deleted = await service.request("DELETE", petUrl, { apiKey: API_KEY })
    expect(deleted.status).toBe(204)
    await expectDocumentedResponse({ method: "DELETE", url: petUrl }, deleted)
  }, 120_000)

  it("every operation answers a request without a key with a documented 401", async () => {
    for (const [path, item] of Object.entries<Json>(doc["paths"])) {
      for (const method of Object.keys(item)) {
        const url = `/v1${path.replace(/\{\w+\}/g, "1")}`
        const response = await service.request(method.toUpperCase(), url)
        expect(response.status, `${method} ${url}`).toBe(401)
        await expectDocumentedResponse({ method: method.toUpperCase(), url }, response)
      }
    }
  })

  it("following the Link of a page gives documented pages", async () => {
    let url: string | undefined = "/v1/pets?limit=1"
    for (let pages = 0; url !== undefined && pages < 5; pages++) {
      const response = await service.request("GET", url, { apiKey: API_KEY })
      expect(response.status).toBe(200)
      await expectDocumentedResponse({ method: "GET", url }, response)
      url = /^<([^>]+)>; rel="next"$/.exec(response.headers.get("link") ?? "")?.[1]
    }
  })
})
