import { EventType } from "../../../domain/events/EventType.ts"
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from "../../../domain/paging/PageLimit.ts"
import { AUTH_REALM, ERROR_CODES } from "./ApiErrors.ts"
import { SUNSET } from "./Sunset.ts"

type Json = Record<string, any>

const ERROR_REF = { $ref: "#/components/schemas/Error" }

// Success bodies travel as text (for lossless int64); these are the JSON schemas they carry.
const SUCCESS_SCHEMAS: Partial<Record<string, string>> = {
  listPets: "Pets",
  listTags: "TagCounts",
  createPet: "Pet",
  getPet: "Pet",
  updatePet: "Pet",
  listOrders: "Orders",
  placeOrder: "Order",
  getOrder: "Order",
  approveOrder: "Order",
  deliverOrder: "Order",
  cancelOrder: "Order",
  createWebhook: "IssuedWebhook",
  listWebhooks: "Webhooks",
  getWebhook: "Webhook",
  updateWebhook: "Webhook",
  rotateWebhookSecret: "IssuedWebhook",
  listWebhookDeliveries: "WebhookDeliveries",
  listEvents: "Events",
  uploadPetPhoto: "Photo",
  listPetPhotos: "Photos"
}

// Request bodies, likewise.
const REQUEST_SCHEMAS: Partial<Record<string, string>> = {
  createPet: "NewPet",
  placeOrder: "NewOrder",
  createWebhook: "NewWebhook",
  updatePet: "PetPatch",
  updateWebhook: "WebhookPatch"
}

// The creates ignore unknown body fields; a patch refuses them, so PetPatch and WebhookPatch stay closed.
const OPEN_REQUEST_SCHEMAS = ["NewPet", "NewOrder", "NewWebhook"]

// The operations that answer a pet, with its ETag.
const ETAG_OPERATIONS = new Set(["createPet", "getPet", "updatePet"])

const ETAG_HEADER = {
  ETag: {
    description: "The pet's `version` as a strong entity tag (`\"3\"`); it changes with every change of the pet, " +
      "orders' status changes included. Send it back in `If-Match` to change the pet only if it is unchanged.",
    schema: { type: "string" },
    required: true
  }
}

const INT64 = { type: "integer", format: "int64" } as const

// One example per body schema, each valid against its schema (the linters check that).
const PET_EXAMPLE = { id: 1, name: "Rex", categoryId: 9, status: "available", tags: ["dog", "young"], version: 1 }
const TAG_COUNT_EXAMPLE = { tag: "young", pets: 12 }
const ORDER_EXAMPLE = {
  id: 1,
  petId: 1,
  quantity: 1,
  status: "placed",
  complete: false,
  createdAt: "2026-11-21T10:00:00.000Z",
  updatedAt: "2026-11-21T10:00:00.000Z"
}
const WEBHOOK_EXAMPLE = {
  id: 1,
  url: "https://hooks.example.com/animal-store",
  types: ["pet.created", "order.placed"],
  createdAt: "2026-11-21T10:00:00.000Z",
  state: "active"
}
const DELIVERY_EXAMPLE = {
  id: 1,
  eventId: 42,
  attempt: 1,
  attemptedAt: "2026-11-21T10:00:01.000Z",
  outcome: "delivered",
  httpStatus: 204,
  durationMs: 87
}
const PHOTO_URL = (rendition: string) =>
  `/v1/pets/1/photos/7/${rendition}?expires=1795600800&signature=3q2-7wEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`
const PHOTO_RECORD_EXAMPLE = {
  id: 7,
  petId: 1,
  contentType: "image/jpeg",
  width: 3024,
  height: 4032,
  bytes: 2841203,
  createdAt: "2026-11-21T10:00:00.000Z"
}
const PHOTO_EXAMPLE = {
  ...PHOTO_RECORD_EXAMPLE,
  urls: { original: PHOTO_URL("original"), thumb: PHOTO_URL("thumb"), medium: PHOTO_URL("medium") }
}
const EVENT_EXAMPLE = { id: 42, type: "pet.created", occurredAt: "2026-11-21T10:00:00.000Z", data: PET_EXAMPLE }
const EXAMPLES: Partial<Record<string, unknown>> = {
  Event: EVENT_EXAMPLE,
  Events: [EVENT_EXAMPLE],
  Pet: PET_EXAMPLE,
  Pets: [PET_EXAMPLE],
  NewPet: { name: "Rex", categoryId: 9, status: "available", tags: ["dog", "young"] },
  TagCount: TAG_COUNT_EXAMPLE,
  TagCounts: [{ tag: "dog", pets: 40 }, TAG_COUNT_EXAMPLE],
  PetPatch: { name: "Rex II", status: null },
  Order: ORDER_EXAMPLE,
  Orders: [ORDER_EXAMPLE],
  NewOrder: { petId: 1 },
  NewWebhook: { url: "https://hooks.example.com/animal-store", types: ["pet.created", "order.placed"] },
  Webhook: WEBHOOK_EXAMPLE,
  Webhooks: [WEBHOOK_EXAMPLE],
  IssuedWebhook: { ...WEBHOOK_EXAMPLE, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
  WebhookPatch: { state: "active" },
  WebhookPing: {
    messageId: "ping_7d9f8b2e-4c1a-4e5b-9a3d-2f6c8e1b0a47",
    sentAt: "2026-11-21T10:00:00.000Z",
    outcome: "delivered",
    httpStatus: 204,
    durationMs: 87
  },
  WebhookDelivery: DELIVERY_EXAMPLE,
  WebhookDeliveries: [DELIVERY_EXAMPLE],
  Inventory: { available: 12, pending: 1, sold: 3, none: 0 },
  Photo: PHOTO_EXAMPLE,
  Photos: [PHOTO_EXAMPLE],
  PhotoRecord: PHOTO_RECORD_EXAMPLE
}

const exampleOf = (schema: Json | undefined): unknown =>
  typeof schema?.["$ref"] === "string" ? EXAMPLES[schema["$ref"].replace("#/components/schemas/", "")] : undefined

/** What each parameter is, by operation where the same name means different things. */
const describeParameter = (operationId: string, parameter: Json): void => {
  const orders = operationId === "listOrders"
  const deliveries = operationId === "listWebhookDeliveries"
  switch (parameter.name) {
    case "limit":
      parameter.description = `Maximum number of ${
        orders ? "orders" : deliveries ? "delivery attempts" : operationId === "listTags" ? "tags" : "animals"
      } to return.`
      parameter.schema = { type: "integer", minimum: PAGE_LIMIT_MIN, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT }
      break
    case "petId":
      parameter.description = parameter.in === "path" ? "Identifier of the animal." : "Only orders for this animal."
      parameter.schema = INT64
      break
    case "orderId":
      parameter.description = "Identifier of the order."
      parameter.schema = INT64
      break
    case "webhookId":
      parameter.description = "Identifier of the webhook subscription."
      parameter.schema = { ...INT64, minimum: 1 }
      break
    case "photoId":
      parameter.description = "Identifier of the photo."
      parameter.schema = { ...INT64, minimum: 1 }
      break
    case "rendition":
      parameter.description = "`original` (upright, without metadata, in its own type), `thumb` or `medium` (WebP)."
      break
    case "status":
      parameter.description = `Only ${orders ? "orders" : "animals"} with this status are returned.`
      parameter.schema = { $ref: `#/components/schemas/${orders ? "OrderStatus" : "PetStatus"}` }
      break
    case "after":
      parameter.description = "Only events after this event id (the `id` of the last event read); without it, from the oldest kept."
      parameter.schema = { ...INT64, minimum: 0 }
      break
    case "type":
      parameter.description = "Only events of these types; repeat the parameter for several."
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

const REQUEST_ID_HEADER = {
  "X-Request-Id": {
    description: "The request's id (the client's own `X-Request-Id` when it is 1 to 128 visible ASCII characters), also on its log line.",
    schema: { type: "string" },
    required: true
  }
}

const RETRY_AFTER_HEADER = {
  "Retry-After": {
    description: "Seconds to wait; sent while the service starts or shuts down.",
    schema: { type: "integer", minimum: 0 }
  }
}

// HttpApi writes header names as the schemas spell them (lowercase); documents spell them as RFCs do.
const HEADER_NAMES: Partial<Record<string, string>> = {
  etag: "ETag",
  link: "Link",
  location: "Location",
  "www-authenticate": "WWW-Authenticate"
}
const HEADER_DESCRIPTIONS: Partial<Record<string, string>> = {
  Link: "`<...>; rel=\"next\"`: the next page, when more exist.",
  Location: "The path of the created resource."
}

const canonicalHeaders = (headers: Json | undefined): Json =>
  Object.fromEntries(Object.entries<Json>(headers ?? {}).map(([name, header]) => {
    const canonical = HEADER_NAMES[name] ?? name
    const description = HEADER_DESCRIPTIONS[canonical]
    return [canonical, description === undefined || header["description"] !== undefined ? header : { description, ...header }]
  }))

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

// The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers), on every answer to a
// verified key and on every 429. Absent when limiting is off or its store does not answer.
const rateLimitHeaders = (required: boolean) => ({
  "RateLimit-Policy": {
    description: "The quota policy: `\"key\";q=200;w=2` (per API key) or `\"address\";q=20;w=10` (per client " +
      "address, for requests without a valid key): `q` requests, regained evenly over `w` seconds.",
    schema: { type: "string" },
    required
  },
  RateLimit: {
    description: "What is left of the quota: `\"key\";r=57;t=1`, `r` requests now, more in `t` seconds.",
    schema: { type: "string" },
    required
  }
})

const rateLimitedHeaders = {
  "Retry-After": {
    description: "Seconds until the next request is allowed.",
    schema: { type: "integer", minimum: 1 },
    required: true
  },
  ...rateLimitHeaders(true)
}

// A delivery's Standard Webhooks headers, the same for every event type.
const WEBHOOK_HEADERS = [
  ["webhook-id", "`evt_<event id>`: the same on every attempt at one event; deduplicate on it."],
  ["webhook-timestamp", "When this attempt was signed, in seconds since the epoch."],
  ["webhook-signature", "`v1,<base64 HMAC-SHA256>` per signing secret, space-separated (two during a rotation's overlap)."]
].map(([name, description]) => ({ name, in: "header", required: true, description, schema: { type: "string" } }))

// What sends each event type, where the type's name alone does not say it all.
const WEBHOOK_CAUSES: Partial<Record<EventType, string>> = {
  "pet.updated": "Sent for an edit of the pet, and for an order's place, delivery or cancellation, which " +
    "changes its pet's status (right after that order's event; an approval leaves the pet `pending` and sends none). ",
  "pet.photo_added": "Sent when a photo of the pet is uploaded; `data` is its record, without URLs (list the " +
    "pet's photos for signed ones). ",
  "pet.photo_removed": "Sent when a photo of the pet is deleted; `data` is the record it had. "
}

// The body of a message sent to a subscription: `{type, timestamp, data}`.
const webhookBody = (type: string, timestamp: string, resource: string, data: Json) => ({
  required: true,
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["type", "timestamp", "data"],
        properties: {
          type: { type: "string", const: type },
          timestamp: { type: "string", format: "date-time", description: timestamp },
          data: { $ref: `#/components/schemas/${resource}` }
        }
      },
      example: { type, timestamp: "2026-11-21T10:00:00.000Z", data }
    }
  }
})

// The test message of pingWebhook: signed as a delivery, its own id each time.
const pingWebhook = {
  post: {
    // Not `pingWebhook`: that is the operation that sends it.
    operationId: "pingDelivery",
    summary: "ping delivery",
    description: "Sent when `pingWebhook` is called (`POST /webhooks/{webhookId}/ping`), whatever the subscription's " +
      "state and types, once: it is never retried, recorded or counted, and what the receiver answers changes " +
      "nothing (a 410 disables nothing). It may arrive between two events.",
    tags: ["webhooks"],
    security: [],
    parameters: WEBHOOK_HEADERS.map((header) =>
      header.name === "webhook-id"
        ? { ...header, description: "`ping_<uuid>`: new for every ping." }
        : header
    ),
    requestBody: webhookBody("ping", "When the ping was sent.", "Webhook", WEBHOOK_EXAMPLE),
    responses: {
      "204": { description: "Received (any 2xx)." }
    }
  }
}

/**
 * The top-level `webhooks` section: one POST per event type, as the service sends it to
 * a subscription's URL (`data` is the resource as the API writes it), and the ping.
 */
const webhooksSection = (): Json => ({
  ...Object.fromEntries(EventType.literals.map((type) => {
    const resource = type === "pet.updated"
      ? "PetChange"
      : type.startsWith("pet.photo_")
      ? "PhotoRecord"
      : type.startsWith("pet.")
      ? "Pet"
      : "Order"
    return [type, {
      post: {
        operationId: `${type.replace(/\.(\w)/, (_, letter: string) => letter.toUpperCase())}Webhook`,
        summary: `${type} delivery`,
        description: (WEBHOOK_CAUSES[type] ?? "") +
          `Sent to each active subscription to \`${type}\`, at least once and in event order, ` +
          "signed per Standard Webhooks. A 2xx is delivered; 410 disables the subscription; anything else " +
          "is retried with backoff for up to 24 hours.",
        tags: ["webhooks"],
        security: [],
        parameters: WEBHOOK_HEADERS,
        requestBody: webhookBody(
          type,
          "When the change happened.",
          resource,
          resource === "Order"
            ? ORDER_EXAMPLE
            : resource === "Pet"
            ? PET_EXAMPLE
            : resource === "PhotoRecord"
            ? PHOTO_RECORD_EXAMPLE
            : { ...PET_EXAMPLE, changed: ["name"] }
        ),
        responses: {
          "204": { description: "Received (any 2xx)." },
          "410": { description: "Gone: the subscription is disabled, nothing more is sent." }
        }
      }
    }]
  })),
  ping: pingWebhook
})

const IMAGE_HEADERS = {
  ETag: {
    description: "The rendition's content hash as a strong entity tag; send it in `If-None-Match` for a 304.",
    schema: { type: "string" },
    required: true
  },
  "Cache-Control": {
    description: "`public, max-age=31536000, immutable`: a rendition never changes.",
    schema: { type: "string" },
    required: true
  },
  "Content-Security-Policy": {
    description: "`default-src 'none'`: the bytes are an image, never a page.",
    schema: { type: "string" },
    required: true
  }
}

// The photo operations' bodies: the upload's form file is bytes (not base64), the
// renditions are images with their caching headers, and the bodies are plain binary.
const photoOperations = (spec: Json): void => {
  const upload = spec["paths"]?.["/pets/{petId}/photos"]?.post
  const form = upload?.requestBody?.content?.["multipart/form-data"]
  if (form !== undefined) {
    form.schema.properties.file = { type: "string", format: "binary", description: "The image: JPEG, PNG or WebP." }
    form.encoding = { file: { contentType: "image/jpeg, image/png, image/webp" } }
  }
  for (const body of Object.values<Json>(upload?.requestBody?.content ?? {})) delete body["x-effect-stream"]
  const rendition = spec["paths"]?.["/pets/{petId}/photos/{photoId}/{rendition}"]?.get
  const ok = rendition?.responses?.["200"]
  if (ok !== undefined) {
    ok.description = "The rendition's bytes."
    for (const body of Object.values<Json>(ok.content ?? {})) delete body["x-effect-stream"]
    ok.headers = { ...ok.headers, ...IMAGE_HEADERS }
  }
  const found = rendition?.responses?.["302"]
  if (found !== undefined) {
    found.description = "Found: the bytes are at `Location`, a presigned URL of the object store (`PHOTO_STORE=s3`), " +
      "valid for 5 minutes."
    found.headers = {
      ...found.headers,
      Location: { description: "The presigned URL of the rendition's bytes.", schema: { type: "string" }, required: true },
      "Cache-Control": {
        description: "`private, max-age=240`: the redirect may be followed again while its URL is valid.",
        schema: { type: "string" },
        required: true
      }
    }
  }
  const notModified = rendition?.responses?.["304"]
  if (notModified !== undefined) {
    notModified.description = "Not modified: the `If-None-Match` names this rendition's ETag."
    notModified.headers = { ...notModified.headers, ETag: IMAGE_HEADERS.ETag }
  }
  const signature = spec["components"]?.securitySchemes?.photoUrlSignature
  if (signature !== undefined) {
    signature.description = "The `signature` of a signed photo URL (with its `expires`), as a photo record gives it."
  }
}

/**
 * Fixes what HttpApi cannot express in the generated document, so it matches the spec:
 * paths relative to the /v1 base address, integer query/path parameters (HttpApi documents them as patterned strings), the
 * lossless JSON bodies (carried as text), one Error schema for all errors, the headers
 * every response carries (rate limits included), examples, request bodies open to unknown fields (as the
 * service treats them), and the bearer scheme spelled as OpenAPI tools expect.
 */
export const transformOpenApi = (spec: Json): Json => {
  // HttpApi's info annotations have no contact; linters expect one.
  spec["info"] = { ...spec["info"], contact: { name: "Animal Store maintainers" } }
  // The spec's base addresses already end in /v1, so its paths are relative to that.
  spec["paths"] = Object.fromEntries(
    Object.entries<Json>(spec["paths"] ?? {}).map(([path, item]) => [path.replace(/^\/v1(?=\/)/, ""), item])
  )
  for (const item of Object.values<Json>(spec["paths"] ?? {})) {
    for (const operation of Object.values<Json>(item)) {
      for (const parameter of operation["parameters"] ?? []) describeParameter(operation["operationId"], parameter)
      const content: Json | undefined = operation["requestBody"]?.content
      const requestSchema = REQUEST_SCHEMAS[operation["operationId"]]
      // A merge patch is accepted as application/json too (JsonContentType).
      if (content?.["application/merge-patch+json"] !== undefined) content["application/json"] ??= {}
      for (const body of Object.values<Json>(content ?? {})) {
        if (requestSchema !== undefined) body.schema = { $ref: `#/components/schemas/${requestSchema}` }
        body.example = exampleOf(body.schema)
      }
      // The body limit applies to every route, bodiless ones too: a declared Content-Length
      // over it is refused before authentication.
      operation["responses"] = { ...operation["responses"], "413": operation["responses"]?.["413"] ?? { description: "PayloadTooLarge" } }
      for (const [status, response] of Object.entries<Json>(operation["responses"] ?? {})) {
        const success = SUCCESS_SCHEMAS[operation["operationId"]]
        if (Number(status) < 300 && success !== undefined) {
          response["content"] = { "application/json": { schema: { $ref: `#/components/schemas/${success}` } } }
        }
        const media = response["content"]?.["application/json"]
        if (Number(status) < 300 && media !== undefined) media.example = exampleOf(media.schema)
        response["headers"] = { ...canonicalHeaders(response["headers"]), ...REQUEST_ID_HEADER }
        if (Number(status) < 300) response["headers"] = { ...response["headers"], ...rateLimitHeaders(false) }
        if (Number(status) < 300 && ETAG_OPERATIONS.has(operation["operationId"])) {
          response["headers"] = { ...response["headers"], ...ETAG_HEADER }
        }
        if (status === "429") response["headers"] = { ...response["headers"], ...rateLimitedHeaders }
        if (Number(status) >= 400) {
          response["content"] = { "application/json": { schema: ERROR_REF } }
          if (status === "401") {
            response["headers"]["WWW-Authenticate"] = {
              description: `Bearer realm="${AUTH_REALM}", with error="invalid_token" when a key was sent but refused.`,
              schema: { type: "string" },
              required: true
            }
          }
          if (status === "503") response["headers"] = { ...response["headers"], ...RETRY_AFTER_HEADER }
        }
        if (operation["deprecated"] === true) {
          response["headers"] = { ...response["headers"], ...deprecationHeaders }
        }
      }
    }
  }
  photoOperations(spec)
  // RFC 7617/6750 scheme names are case-insensitive, but OpenAPI tools match `bearer` exactly.
  for (const scheme of Object.values<Json>(spec["components"]?.securitySchemes ?? {})) {
    if (scheme["type"] === "http") {
      scheme["scheme"] = String(scheme["scheme"]).toLowerCase()
      scheme["description"] ??= "An API key, sent as `Authorization: Bearer <key>`."
    }
  }
  const schemas: Json = spec["components"]?.schemas ?? {}
  for (const name of Object.keys(schemas)) {
    if (name.endsWith("Encoded")) delete schemas[name]
  }
  // An order is for one pet: the only quantity the service accepts or writes is 1.
  for (const name of ["Order", "NewOrder"]) {
    const properties = schemas[name]?.properties
    if (properties?.quantity !== undefined) {
      properties.quantity = { type: "integer", const: 1, description: "Always 1: an order is for one pet." }
    }
  }
  for (const time of ["createdAt", "updatedAt"]) {
    const property = schemas["Order"]?.properties?.[time]
    if (property !== undefined) property.format = "date-time"
  }
  // A webhook URL is an absolute https URL (http too where WEBHOOK_ALLOW_PRIVATE allows it);
  // which hosts are allowed (public addresses only) depends on DNS at the time, which no
  // schema can say: the description does.
  const webhookUrl = schemas["NewWebhook"]?.properties?.url
  if (webhookUrl !== undefined) Object.assign(webhookUrl, { format: "uri", pattern: "^[Hh][Tt][Tt][Pp][Ss]://" })
  // The service ignores unknown request body fields (a client-supplied `id` included), so the document allows them.
  for (const name of OPEN_REQUEST_SCHEMAS) delete schemas[name]?.additionalProperties
  schemas["Error"] = ErrorSchema
  // pet.updated's data: the pet after the change, and the fields the change set or removed.
  const pet: Json | undefined = schemas["Pet"]
  if (pet !== undefined) {
    schemas["PetChange"] = {
      ...pet,
      description: "A pet after a change (pet.updated: an edit, or an order's change of its status), with the " +
        "names of the fields the change set or removed.",
      properties: {
        ...pet.properties,
        changed: { type: "array", items: { type: "string", enum: ["name", "categoryId", "status", "tags"] }, uniqueItems: true }
      },
      required: [...(pet.required ?? []), "changed"]
    }
  }
  // pet.photo_added and pet.photo_removed's data: a photo without its URLs (they expire).
  const photo: Json | undefined = schemas["Photo"]
  if (photo !== undefined) {
    const { urls: _, ...properties } = photo.properties
    schemas["PhotoRecord"] = {
      ...photo,
      description: "A photo's record as its events carry it: without URLs, which are signed and expire.",
      properties,
      required: (photo.required ?? []).filter((name: string) => name !== "urls")
    }
  }
  spec["webhooks"] = webhooksSection()
  return spec
}
