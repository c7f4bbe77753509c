/**
 * The OpenAPI document the running app serves, checked against the Animal Store spec
 * (shared/spec/animal-store-spec.md) without any third-party validator.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { EventType } from "../../../src/domain/events/EventType.ts"
import { PET_NAME_MAX_CODE_POINTS, PET_NAME_PATTERN } from "../../../src/domain/pets/PetName.ts"
import { makeTestServer, SERVERS } from "./TestServer.ts"

type Json = Record<string, any>

let doc: Json

beforeAll(async () => {
  const server = makeTestServer()
  const result = await server.call("GET", "/v1/openapi.json")
  await server.dispose()
  expect(result.status).toBe(200)
  expect(result.headers.get("content-type")).toBe("application/json")
  doc = result.json as Json
})

const operation = (path: string, method: string): Json => {
  const op = doc["paths"]?.[path]?.[method]
  expect(op, `${method.toUpperCase()} ${path}`).toBeDefined()
  return op as Json
}

const OPERATIONS = [
  ["/pets", "get", "listPets"],
  ["/pets", "post", "createPet"],
  ["/tags", "get", "listTags"],
  ["/pets/{petId}", "get", "getPet"],
  ["/pets/{petId}", "patch", "updatePet"],
  ["/pets/{petId}", "delete", "deletePet"]
] as const

const ERROR_STATUSES = {
  listPets: ["400", "401"],
  createPet: ["400", "401", "413", "415"],
  listTags: ["400", "401"],
  getPet: ["400", "401", "404", "410"],
  updatePet: ["400", "401", "403", "404", "409", "412", "413", "415"],
  deletePet: ["400", "401", "403", "404", "409", "412"]
} as const

/** Follows local `$ref`s ("#/a/b") to the schema they name. */
const resolve = (schema: Json): Json => {
  let current = schema
  for (let hops = 0; typeof current?.["$ref"] === "string"; hops++) {
    expect(hops).toBeLessThan(10)
    const ref: string = current["$ref"]
    expect(ref.startsWith("#/")).toBe(true)
    current = ref.slice(2).split("/").reduce<Json>((node, key) => node?.[key], doc)
    expect(current, `unresolved ${ref}`).toBeDefined()
  }
  return current
}

const headerNames = (response: Json) => Object.keys(response["headers"] ?? {}).map((name) => name.toLowerCase())

const parameter = (op: Json, name: string): Json => {
  const found = (op["parameters"] as Array<Json> | undefined ?? []).find((p) => p["name"] === name)
  expect(found, `parameter ${name}`).toBeDefined()
  return found as Json
}

const jsonSchemaOf = (response: Json): Json => {
  const schema = response["content"]?.["application/json"]?.["schema"]
  expect(schema).toBeDefined()
  return schema as Json
}

const expectInt64 = (schema: Json) => {
  const resolved = resolve(schema)
  expect(resolved["type"]).toBe("integer")
  expect(resolved["format"]).toBe("int64")
}

const expectPetStatusRef = (schema: Json) => {
  expect(schema["$ref"]).toBe("#/components/schemas/PetStatus")
  const status = resolve(schema)
  expect(status["type"]).toBe("string")
  expect(status["enum"]).toEqual(["available", "pending", "sold"])
}

describe("OpenAPI document (GET /v1/openapi.json)", () => {
  it("is OpenAPI 3.1.x describing Animal Store 1.0.0", () => {
    expect(doc["openapi"]).toMatch(/^3\.1\.\d+$/)
    expect(doc["info"]?.["title"]).toBe("Animal Store")
    expect(doc["info"]?.["version"]).toBe("1.0.0")
  })

  it("versions the HTTP interface, not the package: its major version is the /v1 of every path", () => {
    const version = doc["info"]?.["version"] as string
    const servers = doc["servers"] as Array<Json>
    // The package's version is its own (2.0.0 for changes only embedders see): docs/decisions/0012-api-version.md.
    expect(servers[0]?.["url"]).toBe(`/v${version.split(".")[0]}`)
  })

  it("lists the production and staging base addresses it was given, each ending in /v1", () => {
    const servers = doc["servers"] as Array<Json>
    // First the relative address of the instance itself, which docs pages call by default.
    expect(servers.map((server) => server["url"])).toEqual(["/v1", SERVERS.production, SERVERS.staging])
    for (const server of servers) expect(server["url"]).toMatch(/\/v1$/)
  })

  it("describes each event type's delivery in the top-level webhooks section", () => {
    expect(Object.keys(doc["webhooks"]).sort()).toEqual([...EventType.literals, "ping"].sort())
    const placed = doc["webhooks"]["order.placed"].post
    const schema = placed.requestBody.content["application/json"].schema
    expect(schema.required).toEqual(["type", "timestamp", "data"])
    expect(schema.properties.type).toEqual({ type: "string", const: "order.placed" })
    expect(schema.properties.data).toEqual({ $ref: "#/components/schemas/Order" })
    expect(doc["webhooks"]["pet.created"].post.requestBody.content["application/json"].schema.properties.data)
      .toEqual({ $ref: "#/components/schemas/Pet" })
    expect(placed.parameters.map((parameter: Json) => parameter["name"])).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"])
    expect(Object.keys(placed.responses)).toEqual(["204", "410"])
  })

  it("documents re-enabling a webhook (a closed merge patch of state: active) and its ping, sent and answered", () => {
    const update = operation("/webhooks/{webhookId}", "patch")
    expect(update["operationId"]).toBe("updateWebhook")
    expect(Object.keys(update["requestBody"]["content"]).sort()).toEqual(["application/json", "application/merge-patch+json"])
    const patch = resolve({ $ref: "#/components/schemas/WebhookPatch" })
    expect(patch["properties"]["state"]).toMatchObject({ type: "string", enum: ["active"] })
    expect(patch["required"] ?? []).toEqual([])
    expect(patch["additionalProperties"]).toBe(false)
    expect(jsonSchemaOf(update["responses"]["200"])).toEqual({ $ref: "#/components/schemas/Webhook" })
    const ping = operation("/webhooks/{webhookId}/ping", "post")
    expect(ping["operationId"]).toBe("pingWebhook")
    expect(ping["requestBody"]).toBeUndefined()
    const answer = resolve(jsonSchemaOf(ping["responses"]["200"]))
    expect([...answer["required"]].sort()).toEqual(["durationMs", "messageId", "outcome", "sentAt"])
    expect(resolve(answer["properties"]["outcome"])["enum"]).toEqual(["delivered", "gone", "retry"])
    for (const op of [update, ping]) expect(Object.keys(op["responses"])).toEqual(expect.arrayContaining(["200", "400", "401", "403", "404"]))
    const sent = doc["webhooks"]["ping"].post
    expect(sent.requestBody.content["application/json"].schema.properties.type).toEqual({ type: "string", const: "ping" })
    expect(sent.requestBody.content["application/json"].schema.properties.data).toEqual({ $ref: "#/components/schemas/Webhook" })
    expect(Object.keys(sent.responses)).toEqual(["204"])
  })

  it("has exactly the paths of the animals, the store, the events and the webhooks areas, relative to the /v1 base", () => {
    expect(Object.keys(doc["paths"]).sort()).toEqual([
      "/events",
      "/pets",
      "/pets/{petId}",
      "/pets/{petId}/photos",
      "/pets/{petId}/photos/{photoId}",
      "/pets/{petId}/photos/{photoId}/{rendition}",
      "/store/inventory",
      "/store/orders",
      "/store/orders/{orderId}",
      "/store/orders/{orderId}/approve",
      "/store/orders/{orderId}/cancel",
      "/store/orders/{orderId}/deliver",
      "/tags",
      "/webhooks",
      "/webhooks/{webhookId}",
      "/webhooks/{webhookId}/deliveries",
      "/webhooks/{webhookId}/ping",
      "/webhooks/{webhookId}/rotate-secret"
    ])
    expect(Object.keys(doc["paths"]["/pets"]).filter((k) => k !== "parameters").sort()).toEqual(["get", "post"])
    expect(Object.keys(doc["paths"]["/pets/{petId}"]).filter((k) => k !== "parameters").sort()).toEqual([
      "delete",
      "get",
      "patch"
    ])
  })

  describe("the store area", () => {
    const STORE_OPERATIONS = [
      ["/store/orders", "get", "listOrders", "Orders"],
      ["/store/orders", "post", "placeOrder", "Order"],
      ["/store/orders/{orderId}", "get", "getOrder", "Order"],
      ["/store/orders/{orderId}/approve", "post", "approveOrder", "Order"],
      ["/store/orders/{orderId}/deliver", "post", "deliverOrder", "Order"],
      ["/store/orders/{orderId}/cancel", "post", "cancelOrder", "Order"],
      ["/store/inventory", "get", "getInventory", undefined]
    ] as const

    it.each(STORE_OPERATIONS)("%s %s is %s, tagged store, bearer-protected, with its success schema", (path, method, id, schema) => {
      const op = operation(path, method)
      expect(op["operationId"]).toBe(id)
      expect(op["tags"]).toEqual(["store"])
      expect(op["security"]).toEqual([{ bearerAuth: [] }])
      const success = op["responses"][method === "post" && id === "placeOrder" ? "201" : "200"] as Json
      if (schema !== undefined) expect(jsonSchemaOf(success)).toEqual({ $ref: `#/components/schemas/${schema}` })
      expect(op["responses"]["401"]).toBeDefined()
    })

    it("documents the order, its status, the new-order body and the inventory", () => {
      const order = resolve({ $ref: "#/components/schemas/Order" })
      expect(Object.keys(order["properties"]).sort()).toEqual(
        ["complete", "createdAt", "id", "petId", "quantity", "status", "updatedAt"]
      )
      expect(resolve({ $ref: "#/components/schemas/OrderStatus" })["enum"]).toEqual(["placed", "approved", "delivered", "cancelled"])
      expect(operation("/store/orders", "post")["requestBody"]["content"]["application/json"]["schema"])
        .toEqual({ $ref: "#/components/schemas/NewOrder" })
      expect(Object.keys(resolve({ $ref: "#/components/schemas/NewOrder" })["properties"]).sort()).toEqual(["petId", "quantity"])
      const inventory = resolve(jsonSchemaOf(operation("/store/inventory", "get")["responses"]["200"]))
      expect(Object.keys(inventory["properties"]).sort()).toEqual(["available", "none", "pending", "sold"])
    })

    it("documents the 409s of placing and moving orders", () => {
      expect(operation("/store/orders", "post")["responses"]["409"]).toBeDefined()
      expect(operation("/store/orders/{orderId}/cancel", "post")["responses"]["409"]).toBeDefined()
      expect(operation("/store/orders/{orderId}", "get")["responses"]["404"]).toBeDefined()
    })

    it("types the order parameters: int64 ids, the order status enum", () => {
      const list = operation("/store/orders", "get")["parameters"] as Array<Json>
      expect(list.find((p) => p["name"] === "status")!["schema"]).toEqual({ $ref: "#/components/schemas/OrderStatus" })
      expect(list.find((p) => p["name"] === "petId")!["schema"]).toEqual({ type: "integer", format: "int64" })
      const get = operation("/store/orders/{orderId}", "get")["parameters"] as Array<Json>
      expect(get.find((p) => p["name"] === "orderId")!["schema"]).toEqual({ type: "integer", format: "int64" })
    })
  })

  it.each(OPERATIONS)("%s %s has operationId %s and the tag animals", (path, method, operationId) => {
    const op = operation(path, method)
    expect(op["operationId"]).toBe(operationId)
    expect(op["tags"]).toEqual(["animals"])
  })

  it("declares the animals tag", () => {
    expect((doc["tags"] as Array<Json>).map((tag) => tag["name"])).toContain("animals")
  })

  it("defines bearerAuth as HTTP bearer authentication", () => {
    const scheme = doc["components"]?.["securitySchemes"]?.["bearerAuth"] as Json
    expect(scheme).toBeDefined()
    expect(scheme["type"]).toBe("http")
    // Exactly lowercase: docs pages and generators match the scheme name as written.
    expect(scheme["scheme"]).toBe("bearer")
  })

  it.each(OPERATIONS)("%s %s requires bearerAuth, with no anonymous alternative", (path, method) => {
    const op = operation(path, method)
    const security = (op["security"] ?? doc["security"]) as Array<Json>
    expect(security).toEqual([{ bearerAuth: [] }])
  })

  it("marks getPet, and only getPet, deprecated", () => {
    expect(operation("/pets/{petId}", "get")["deprecated"]).toBe(true)
    expect(operation("/pets", "get")["deprecated"] ?? false).toBe(false)
    expect(operation("/pets", "post")["deprecated"] ?? false).toBe(false)
  })

  describe("schemas", () => {
    it("PetStatus is the string enum available, pending, sold", () => {
      expectPetStatusRef({ $ref: "#/components/schemas/PetStatus" })
    })

    it("Pet has int64 id and categoryId, a string name, a PetStatus status, tags and an integer version, the ETag's; all but status required", () => {
      const pet = resolve({ $ref: "#/components/schemas/Pet" })
      expect(pet["type"]).toBe("object")
      expect(Object.keys(pet["properties"]).sort()).toEqual(["categoryId", "id", "name", "status", "tags", "version"])
      expect(pet["properties"]["tags"]).toMatchObject({
        type: "array",
        items: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,31}$" },
        maxItems: 10,
        uniqueItems: true
      })
      expectInt64(pet["properties"]["id"])
      expectInt64(pet["properties"]["categoryId"])
      expect(resolve(pet["properties"]["name"])["type"]).toBe("string")
      expectPetStatusRef(pet["properties"]["status"])
      expect(pet["properties"]["version"]).toMatchObject({ type: "integer", minimum: 1 })
      expect(pet["properties"]["version"]["description"]).toContain("ETag")
      expect([...pet["required"]].sort()).toEqual(["categoryId", "id", "name", "tags", "version"])
      // pet.* events carry the pet as the API writes it, version included; `changed` never names it.
      expect(resolve({ $ref: "#/components/schemas/PetChange" })["properties"]["version"]).toEqual(pet["properties"]["version"])
    })

    it("NewPet has an int64 categoryId, a string name and a PetStatus status; required exactly name and categoryId", () => {
      const newPet = resolve({ $ref: "#/components/schemas/NewPet" })
      expect(newPet["type"]).toBe("object")
      expect(Object.keys(newPet["properties"]).sort()).toEqual(["categoryId", "name", "status", "tags"])
      expectInt64(newPet["properties"]["categoryId"])
      expect(resolve(newPet["properties"]["name"])["type"]).toBe("string")
      expectPetStatusRef(newPet["properties"]["status"])
      expect([...newPet["required"]].sort()).toEqual(["categoryId", "name"])
    })

    it("PetPatch is a closed merge patch: optional name, int64 categoryId and a nullable PetStatus status", () => {
      const patch = resolve({ $ref: "#/components/schemas/PetPatch" })
      expect(Object.keys(patch["properties"]).sort()).toEqual(["categoryId", "name", "status", "tags"])
      expect(patch["required"] ?? []).toEqual([])
      expect(patch["additionalProperties"]).toBe(false)
      expectInt64(patch["properties"]["categoryId"])
      expect(patch["properties"]["status"]["anyOf"]).toEqual([{ $ref: "#/components/schemas/PetStatus" }, { type: "null" }])
      const body = operation("/pets/{petId}", "patch")["requestBody"]["content"]
      expect(Object.keys(body).sort()).toEqual(["application/json", "application/merge-patch+json"])
      for (const media of Object.values<Json>(body)) expect(media["schema"]).toEqual({ $ref: "#/components/schemas/PetPatch" })
    })

    it("every answer with a pet documents its ETag; updatePet and deletePet take If-Match; deletePet answers 204", () => {
      for (const [path, method, status] of [["/pets", "post", "201"], ["/pets/{petId}", "get", "200"], ["/pets/{petId}", "patch", "200"]]) {
        expect(headerNames(operation(path!, method!)["responses"][status!]), `${method} ${path}`).toContain("etag")
      }
      for (const method of ["patch", "delete"]) {
        expect(parameter(operation("/pets/{petId}", method), "if-match")["in"]).toBe("header")
      }
      expect(Object.keys(operation("/pets/{petId}", "delete")["responses"])).toContain("204")
    })

    it("Error has required string code, string message and integer status", () => {
      const error = resolve({ $ref: "#/components/schemas/Error" })
      expect(error["type"]).toBe("object")
      expect(error["properties"]["code"]["type"]).toBe("string")
      expect(error["properties"]["message"]["type"]).toBe("string")
      expect(error["properties"]["status"]["type"]).toBe("integer")
      expect([...error["required"]].sort()).toEqual(["code", "message", "status"])
    })

    it("every $ref in the document resolves", () => {
      const refs: Array<string> = []
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) node.forEach(walk)
        else if (node !== null && typeof node === "object") {
          for (const [key, value] of Object.entries(node)) {
            if (key === "$ref" && typeof value === "string") refs.push(value)
            else walk(value)
          }
        }
      }
      walk(doc)
      expect(refs.length).toBeGreaterThan(0)
      for (const ref of refs) resolve({ $ref: ref })
    })
  })

  describe("parameters", () => {
    it("listPets limit is an optional query integer from 1 to 100, default 20 (numbers, not strings)", () => {
      const limit = parameter(operation("/pets", "get"), "limit")
      expect(limit["in"]).toBe("query")
      expect(limit["required"] ?? false).toBe(false)
      const schema = limit["schema"] as Json
      expect(schema["type"]).toBe("integer")
      expect(schema["minimum"]).toBe(1)
      expect(schema["maximum"]).toBe(100)
      expect(schema["default"]).toBe(20)
      expect(schema["pattern"]).toBeUndefined()
    })

    it("listPets status is an optional query parameter referencing PetStatus", () => {
      const status = parameter(operation("/pets", "get"), "status")
      expect(status["in"]).toBe("query")
      expect(status["required"] ?? false).toBe(false)
      expectPetStatusRef(status["schema"])
    })

    it("getPet petId is a required int64 path parameter", () => {
      const petId = parameter(operation("/pets/{petId}", "get"), "petId")
      expect(petId["in"]).toBe("path")
      expect(petId["required"]).toBe(true)
      expect(petId["schema"]).toMatchObject({ type: "integer", format: "int64" })
    })

    it("createPet takes a required application/json NewPet body", () => {
      const body = operation("/pets", "post")["requestBody"] as Json
      expect(body["required"]).toBe(true)
      expect(Object.keys(body["content"])).toEqual(["application/json"])
      expect(body["content"]["application/json"]["schema"]).toEqual({ $ref: "#/components/schemas/NewPet" })
    })
  })

  describe("responses", () => {
    it("listPets 200 is a JSON array of Pet and documents the pagination Link header", () => {
      const ok = operation("/pets", "get")["responses"]["200"] as Json
      const pets = resolve(jsonSchemaOf(ok))
      expect(pets["type"]).toBe("array")
      expect(pets["items"]).toEqual({ $ref: "#/components/schemas/Pet" })
      expect(headerNames(ok)).toContain("link")
    })

    it("createPet 201 is the Pet and documents Location", () => {
      const responses = operation("/pets", "post")["responses"] as Json
      expect(responses["200"]).toBeUndefined()
      expect(jsonSchemaOf(responses["201"])).toEqual({ $ref: "#/components/schemas/Pet" })
      expect(headerNames(responses["201"])).toContain("location")
    })

    it("getPet 200 is the Pet", () => {
      const ok = operation("/pets/{petId}", "get")["responses"]["200"] as Json
      expect(jsonSchemaOf(ok)).toEqual({ $ref: "#/components/schemas/Pet" })
    })

    it.each(OPERATIONS)("%s %s (%s) documents its error statuses, each with the one Error schema", (path, method, id) => {
      const responses = operation(path, method)["responses"] as Json
      for (const status of ERROR_STATUSES[id]) expect(Object.keys(responses)).toContain(status)
      for (const [status, response] of Object.entries<Json>(responses)) {
        if (Number(status) < 400) continue
        expect(Object.keys(response["content"] ?? {}), `${id} ${status}`).toEqual(["application/json"])
        expect(jsonSchemaOf(response), `${id} ${status}`).toEqual({ $ref: "#/components/schemas/Error" })
      }
    })

    it.each(OPERATIONS)("%s %s documents WWW-Authenticate on 401", (path, method) => {
      const unauthorized = operation(path, method)["responses"]["401"] as Json
      expect(headerNames(unauthorized)).toContain("www-authenticate")
    })

    it("every operation documents 429 with Retry-After and the RateLimit fields, and the fields on success", () => {
      const operations = Object.values<Json>(doc["paths"]).flatMap((item) => Object.values<Json>(item))
      expect(operations.length).toBeGreaterThanOrEqual(10)
      for (const op of operations) {
        const responses = op["responses"] as Json
        expect(responses["429"], op["operationId"]).toBeDefined()
        expect(jsonSchemaOf(responses["429"])).toEqual({ $ref: "#/components/schemas/Error" })
        expect(headerNames(responses["429"])).toEqual(expect.arrayContaining(["retry-after", "ratelimit", "ratelimit-policy"]))
        for (const [status, response] of Object.entries<Json>(responses)) {
          if (Number(status) < 300) {
            expect(headerNames(response), `${op["operationId"]} ${status}`).toEqual(
              expect.arrayContaining(["ratelimit", "ratelimit-policy"])
            )
          }
        }
      }
    })

    it("getPet documents Deprecation, Sunset and Link on every response", () => {
      const responses = operation("/pets/{petId}", "get")["responses"] as Json
      for (const status of ["200", ...ERROR_STATUSES.getPet]) {
        expect(headerNames(responses[status]), status).toEqual(expect.arrayContaining(["deprecation", "sunset", "link"]))
      }
      for (const response of Object.values<Json>(responses)) {
        expect(headerNames(response)).toEqual(expect.arrayContaining(["deprecation", "sunset", "link"]))
      }
    })

    it("only getPet documents deprecation headers", () => {
      for (const [path, method] of [["/pets", "get"], ["/pets", "post"]] as const) {
        for (const response of Object.values<Json>(operation(path, method)["responses"])) {
          expect(headerNames(response)).not.toContain("deprecation")
          expect(headerNames(response)).not.toContain("sunset")
        }
      }
    })
  })

  describe("what a client developer relies on", () => {
    const operations = () =>
      Object.values<Json>(doc["paths"]).flatMap((item) => Object.values<Json>(item))

    it("documents the name rules the service enforces: 1 to 255 code points and the pattern", () => {
      for (const schema of ["Pet", "NewPet"]) {
        const name = doc["components"]["schemas"][schema]["properties"]["name"]
        expect(name).toMatchObject({ type: "string", minLength: 1, maxLength: PET_NAME_MAX_CODE_POINTS, pattern: PET_NAME_PATTERN })
      }
    })

    it("lets request bodies carry unknown fields, which the service ignores", () => {
      for (const schema of ["NewPet", "NewOrder"]) {
        expect(doc["components"]["schemas"][schema]["additionalProperties"]).toBeUndefined()
      }
    })

    it("gives every operation a description and examples of its bodies", () => {
      for (const op of operations()) {
        expect(op["description"], op["operationId"]).toMatch(/\S/)
        const request = op["requestBody"]?.["content"]?.["application/json"]
        if (request !== undefined) expect(request["example"], op["operationId"]).toBeDefined()
        for (const [status, response] of Object.entries<Json>(op["responses"])) {
          // A 204 has no body; an image is bytes, not an example.
          if (Number(status) < 300 && status !== "204") {
            const types = Object.keys(response["content"])
            if (types.every((type) => type.startsWith("image/"))) continue
            expect(response["content"]["application/json"]["example"], `${op["operationId"]} ${status}`).toBeDefined()
          }
        }
      }
    })

    it("lists X-Request-Id on every response, Retry-After on every 503, WWW-Authenticate on every 401", () => {
      for (const op of operations()) {
        for (const [status, response] of Object.entries<Json>(op["responses"])) {
          const names = Object.keys(response["headers"] ?? {})
          expect(names, `${op["operationId"]} ${status}`).toContain("X-Request-Id")
          if (status === "503") expect(names).toContain("Retry-After")
          if (status === "401") expect(names).toContain("WWW-Authenticate")
          // One spelling per header.
          expect(new Set(names.map((name) => name.toLowerCase())).size).toBe(names.length)
        }
      }
    })
  })
})

describe("an instance with no public or staging address", () => {
  it("lists only itself, relative, so nothing points at an address that may not exist", async () => {
    const server = makeTestServer(undefined, undefined, undefined, {})
    const result = await server.call("GET", "/v1/openapi.json")
    await server.dispose()
    expect((result.json as Json)["servers"]).toEqual([{ url: "/v1", description: expect.any(String) }])
  })
})
