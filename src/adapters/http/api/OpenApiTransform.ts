import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from "../../../domain/PetQuery.ts"
import { AUTH_REALM, ERROR_CODES } from "./ApiErrors.ts"
import { SUNSET } from "./Sunset.ts"

type Json = Record<string, any>

const ERROR_REF = { $ref: "#/components/schemas/Error" }

// Success bodies travel as text (for lossless int64); these are the JSON schemas they carry.
const SUCCESS_SCHEMAS: Partial<Record<string, string>> = {
  listPets: "Pets",
  createPet: "Pet",
  getPet: "Pet",
  listOrders: "Orders",
  placeOrder: "Order",
  getOrder: "Order",
  approveOrder: "Order",
  deliverOrder: "Order",
  cancelOrder: "Order"
}

// Request bodies, likewise.
const REQUEST_SCHEMAS: Partial<Record<string, string>> = { createPet: "NewPet", placeOrder: "NewOrder" }

const INT64 = { type: "integer", format: "int64" } as const

/** What each parameter is, by operation where the same name means different things. */
const describeParameter = (operationId: string, parameter: Json): void => {
  const orders = operationId === "listOrders"
  switch (parameter.name) {
    case "limit":
      parameter.description = `Maximum number of ${orders ? "orders" : "animals"} to return.`
      parameter.schema = { type: "integer", minimum: PAGE_LIMIT_MIN, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT }
      break
    case "petId":
      parameter.description = parameter.in === "path" ? "Identifier of the animal to retrieve." : "Only orders for this animal."
      parameter.schema = INT64
      break
    case "orderId":
      parameter.description = "Identifier of the order."
      parameter.schema = INT64
      break
    case "status":
      parameter.description = `Only ${orders ? "orders" : "animals"} with this status are returned.`
      parameter.schema = { $ref: `#/components/schemas/${orders ? "OrderStatus" : "PetStatus"}` }
      break
    case "cursor":
      parameter.description = "Opaque position from a previous response's Link rel=\"next\" header."
      parameter.schema = { type: "string" }
      break
  }
}

// The Error body of the spec, one schema for every error status.
const ErrorSchema = {
  type: "object",
  description: "Error body used for every error response.",
  properties: {
    code: {
      type: "string",
      description: "Machine-readable error code.",
      enum: ERROR_CODES
    },
    message: { type: "string", description: "Human-readable description." },
    status: { type: "integer", description: "The HTTP status code of the response." }
  },
  required: ["code", "message", "status"],
  additionalProperties: false
}

const deprecationHeaders = {
  Deprecation: {
    description: "RFC 9745: when the operation was deprecated.",
    schema: { type: "string" },
    required: true
  },
  Sunset: {
    description: "RFC 8594: when the operation stops working.",
    schema: { type: "string", const: SUNSET.httpDate },
    required: true
  },
  Link: {
    description: "The successor operation.",
    schema: { type: "string", const: SUNSET.successorLink },
    required: true
  }
}

/**
 * Fixes what HttpApi cannot express in the generated document, so it matches the spec:
 * paths relative to the /v1 base address, integer query/path parameters (HttpApi documents them as patterned strings), the
 * lossless JSON bodies (carried as text), one Error schema for all errors, and the headers
 * of the deprecated operation.
 */
export const transformOpenApi = (spec: Json): Json => {
  // The spec's base addresses already end in /v1, so its paths are relative to that.
  spec["paths"] = Object.fromEntries(
    Object.entries<Json>(spec["paths"] ?? {}).map(([path, item]) => [path.replace(/^\/v1(?=\/)/, ""), item])
  )
  for (const item of Object.values<Json>(spec["paths"] ?? {})) {
    for (const operation of Object.values<Json>(item)) {
      for (const parameter of operation["parameters"] ?? []) describeParameter(operation["operationId"], parameter)
      const body = operation["requestBody"]?.content?.["application/json"]
      const requestSchema = REQUEST_SCHEMAS[operation["operationId"]]
      if (body !== undefined && requestSchema !== undefined) body.schema = { $ref: `#/components/schemas/${requestSchema}` }
      for (const [status, response] of Object.entries<Json>(operation["responses"] ?? {})) {
        const success = SUCCESS_SCHEMAS[operation["operationId"]]
        if (Number(status) < 300 && success !== undefined) {
          response["content"] = { "application/json": { schema: { $ref: `#/components/schemas/${success}` } } }
        }
        if (Number(status) >= 400) {
          response["content"] = { "application/json": { schema: ERROR_REF } }
          if (status === "401") {
            response["headers"] = {
              "WWW-Authenticate": {
                description: `Bearer realm="${AUTH_REALM}", with error="invalid_token" when a key was sent but refused.`,
                schema: { type: "string" },
                required: true
              }
            }
          }
        }
        if (operation["deprecated"] === true) {
          response["headers"] = { ...response["headers"], ...deprecationHeaders }
        }
      }
    }
  }
  const schemas: Json = spec["components"]?.schemas ?? {}
  for (const name of Object.keys(schemas)) {
    if (name.endsWith("Encoded")) delete schemas[name]
  }
  schemas["Error"] = ErrorSchema
  return spec
}
