import { HttpApi, OpenApi } from "effect/http-api"
import { EventJson, EventsGroup, EventsJson } from "./EventsApi.ts"
import { transformOpenApi } from "./OpenApiTransform.ts"
import { NewPetJson, PetJson, PetPatchFieldsJson, PetsGroup, PetsJson, TagCountsJson } from "./PetsApi.ts"
import { PhotoJson, PhotosGroup, PhotosJson } from "./PhotosApi.ts"
import { NewOrderJson, OrderJson, OrdersJson, StoreGroup } from "./StoreApi.ts"
import {
  DeliveriesJson,
  IssuedWebhookJson,
  NewWebhookJson,
  WebhookJson,
  WebhookPatchFieldsJson,
  WebhooksJson,
  WebhooksGroup
} from "./WebhooksApi.ts"

/**
 * The Animal Store HTTP API, version 1.0.0, under the `/v1` base path. Shared by the
 * server, the OpenAPI document and typed clients; it contains no server code.
 */
export class Api extends HttpApi.make("animal-store")
  .add(PetsGroup)
  .add(PhotosGroup)
  .add(StoreGroup)
  .add(WebhooksGroup)
  .add(EventsGroup)
  .prefix("/v1")
  // Bodies travel as text for lossless int64; these document the JSON they carry.
  .annotate(HttpApi.AdditionalSchemas, [
    NewPetJson.annotate({ identifier: "NewPet" }),
    PetPatchFieldsJson.annotate({ identifier: "PetPatch" }),
    PetJson,
    PetsJson,
    TagCountsJson,
    PhotoJson,
    PhotosJson,
    NewOrderJson.annotate({ identifier: "NewOrder" }),
    OrderJson,
    OrdersJson,
    NewWebhookJson.annotate({ identifier: "NewWebhook" }),
    WebhookPatchFieldsJson.annotate({ identifier: "WebhookPatch" }),
    WebhookJson,
    WebhooksJson,
    IssuedWebhookJson,
    DeliveriesJson,
    EventJson,
    EventsJson
  ])
  .annotateMerge(OpenApi.annotations({
    title: "Animal Store",
    // The HTTP interface's version, which /v1 carries; not the package's (docs/decisions/0012-api-version.md).
    version: "1.0.0",
    license: { name: "MIT", identifier: "MIT" },
    description: "A store's catalogue of animals, and orders for them. All operations need `Authorization: Bearer <API key>`.",
    transform: transformOpenApi
  }))
{}
