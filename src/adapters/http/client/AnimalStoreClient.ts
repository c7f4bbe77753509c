import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { HttpClient, HttpClientError, HttpClientRequest } from "effect/http"
import { type HttpApi, HttpApiClient, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"
import { EventId } from "../../../domain/events/EventId.ts"
import type { IdempotencyKey } from "../../../domain/idempotency/IdempotencyKey.ts"
import type { OrderId } from "../../../domain/orders/OrderId.ts"
import type { PetId } from "../../../domain/pets/PetId.ts"
import type { PhotoId } from "../../../domain/photos/PhotoId.ts"
import type { WebhookId } from "../../../domain/webhooks/WebhookId.ts"
import { Api } from "../api/Api.ts"
import { InvalidRequest } from "../api/ApiErrors.ts"
import type { EventJson } from "../api/EventsApi.ts"
import { CursorParam, DeliveryCursorParam, OrderCursorParam, TagCursorParam } from "../api/PathAndQuery.ts"
import { etagOf } from "../api/PetEntityTag.ts"
import type { NewPetJson, PetJson, PetPatchFieldsJson, TagCountJson } from "../api/PetsApi.ts"
import type { PhotoJson } from "../api/PhotosApi.ts"
import type { InventoryJson, NewOrderJson, OrderJson } from "../api/StoreApi.ts"
import type {
  DeliveryJson,
  IssuedWebhookJson,
  NewWebhookJson,
  WebhookJson,
  WebhookPatchFieldsJson,
  WebhookPingJson
} from "../api/WebhooksApi.ts"

/** How to reach an Animal Store service. */
export interface ClientOptions {
  /** The base address, with or without its `/v1` segment: `https://pets.example.com/v1`. */
  readonly baseUrl: string | URL
  /** The bearer API key. */
  readonly apiKey: Redacted.Redacted<string> | string
}

type Endpoints = typeof Api extends HttpApi.HttpApi<infer _Id, infer Groups> ? HttpApiGroup.Endpoints<Groups> : never

/** The name of an operation of the API, as in its OpenAPI document: `"createPet"`, `"listOrders"`… */
export type Operation = Endpoints["identifier"]

/**
 * What an operation can fail with: the typed errors its responses declare (`NotFound`,
 * `Unauthorized`, `InvalidRequest`…, the classes of `animal-store/http/api`, also exported
 * here), a transport failure, or a response that does not decode.
 */
export type ClientError<Op extends Operation> =
  | HttpApiEndpoint.ErrorsWithIdentifier<Endpoints, Op>
  | HttpClientError.HttpClientError
  | Schema.SchemaError

type QueryOf<Op extends Operation> = HttpApiEndpoint.Query<HttpApiEndpoint.WithIdentifier<Endpoints, Op>>["Type"]

/** A pet as the API answers it, its `version` included: {@link petETag} is its `ETag`. */
export interface PetBody extends Schema.Schema.Type<typeof PetJson> {}

/**
 * The `ETag` of a pet as any operation answers it (a listed one too): `"<version>"`, what
 * `ifMatch` takes to change the pet only if it is still that version.
 */
export const petETag = (pet: Pick<PetBody, "version">): string => etagOf(pet.version)
/** The body of `createPet`. */
export interface NewPetBody extends Schema.Schema.Type<typeof NewPetJson> {}
/** The body of `updatePet`: a JSON Merge Patch; `status: null` removes the status. */
export interface PetPatchBody extends Schema.Schema.Type<typeof PetPatchFieldsJson> {}
/** An order as the API answers it. */
export interface OrderBody extends Schema.Schema.Type<typeof OrderJson> {}
/** The body of `placeOrder`. */
export interface NewOrderBody extends Schema.Schema.Type<typeof NewOrderJson> {}
/** Pets by status, and those without one. */
export interface Inventory extends Schema.Schema.Type<typeof InventoryJson> {}

/** An event of the feed as the API answers it; `data` is the pet or order after the change. */
export interface EventBody extends Schema.Schema.Type<typeof EventJson> {}
/** A pet's photo as the API answers it, with a signed URL per rendition. */
export interface PhotoBody extends Schema.Schema.Type<typeof PhotoJson> {}

/** An uploaded photo and its `Location` (its original's path). */
export interface UploadedPhoto {
  readonly photo: PhotoBody
  readonly location: string
}

/** How an upload is sent: the type of bytes given as a `Uint8Array`, the file's name, an `Idempotency-Key`. */
export interface UploadOptions extends CreateOptions {
  /** The bytes' type when they are a `Uint8Array` (a Blob carries its own); unset, the service sniffs them. */
  readonly contentType?: "image/jpeg" | "image/png" | "image/webp" | undefined
  readonly fileName?: string | undefined
}

/** The filters of `listEvents`: `after` an event id (the last one read), `type` the types wanted. */
export interface EventsQuery extends QueryOf<"listEvents"> {}
/** A page of events; `next` is the `after` of the following page, absent on the last. */
export interface EventsPage {
  readonly events: ReadonlyArray<EventBody>
  readonly next: EventId | undefined
}

/** The filters of `listPets`; `cursor` is a page's `next`, passed with the same filters. */
export interface PetsQuery extends Omit<QueryOf<"listPets">, "cursor"> {
  readonly cursor?: string | undefined
}
/** A webhook subscription, without its secret. */
export interface WebhookBody extends Schema.Schema.Type<typeof WebhookJson> {}
/** A webhook subscription with the secret just made for it (createWebhook, rotateWebhookSecret). */
export interface IssuedWebhookBody extends Schema.Schema.Type<typeof IssuedWebhookJson> {}
/** The body of `createWebhook`. */
export interface NewWebhookBody extends Schema.Schema.Type<typeof NewWebhookJson> {}
/** The body of `updateWebhook`: `{ state: "active" }` re-enables a disabled subscription. */
export interface WebhookPatchBody extends Schema.Schema.Type<typeof WebhookPatchFieldsJson> {}
/** What `pingWebhook` sent, and what the receiver answered. */
export interface WebhookPingBody extends Schema.Schema.Type<typeof WebhookPingJson> {}
/** One attempt at delivering an event to a webhook. */
export interface DeliveryBody extends Schema.Schema.Type<typeof DeliveryJson> {}
/** A page of a webhook's delivery attempts; `next` is the cursor of the following page, when there is one. */
export interface DeliveriesPage {
  readonly deliveries: ReadonlyArray<DeliveryBody>
  readonly next: string | undefined
}

/** The filters of `listOrders`; `cursor` is a page's `next`, passed with the same filters. */
export interface OrdersQuery extends Omit<QueryOf<"listOrders">, "cursor"> {
  readonly cursor?: string | undefined
}

/** A tag in use and how many pets carry it. */
export interface TagCountBody extends Schema.Schema.Type<typeof TagCountJson> {}
/** A page of the tags in use, in tag order; `next` is the opaque cursor of the following page, absent on the last. */
export interface TagsPage {
  readonly tags: ReadonlyArray<TagCountBody>
  readonly next: string | undefined
}

/** A page of pets; `next` is the opaque cursor of the following page, absent on the last. */
export interface PetsPage {
  readonly pets: ReadonlyArray<PetBody>
  readonly next: string | undefined
}
/** A page of orders; `next` is the opaque cursor of the following page, absent on the last. */
export interface OrdersPage {
  readonly orders: ReadonlyArray<OrderBody>
  readonly next: string | undefined
}

/** A stored pet, its `Location` (`/v1/pets/{id}`) and its `ETag`. */
export interface CreatedPet {
  readonly pet: PetBody
  readonly location: string
  readonly etag: string
}
/** A pet after a change, and its new `ETag`. */
export interface UpdatedPet {
  readonly pet: PetBody
  readonly etag: string
}

/**
 * Options of the changes to a pet: with `ifMatch` (an `ETag`: a create's or update's
 * `etag`, or {@link petETag} of any pet read), a pet changed since fails with `PreconditionFailed`.
 */
export interface ChangeOptions {
  readonly ifMatch?: string | undefined
}
/** A placed order and its `Location` (`/v1/store/orders/{id}`). */
export interface PlacedOrder {
  readonly order: OrderBody
  readonly location: string
}

/** Options of the creates: an `Idempotency-Key` makes a retry safe (the first answer comes back). */
export interface CreateOptions {
  readonly idempotencyKey?: IdempotencyKey | undefined
}

/**
 * The operations of the API, one method each, named as in its OpenAPI document. Each
 * answers the value (a plain object where a header matters) or fails with the
 * operation's {@link ClientError}.
 */
export interface AnimalStoreOperations {
  readonly listPets: (query?: PetsQuery) => Effect.Effect<PetsPage, ClientError<"listPets">>
  readonly listTags: (
    page?: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
  ) => Effect.Effect<TagsPage, ClientError<"listTags">>
  readonly createPet: (body: NewPetBody, options?: CreateOptions) => Effect.Effect<CreatedPet, ClientError<"createPet">>
  /** Deprecated by the API: 410 `Gone` after its sunset. */
  readonly getPet: (petId: PetId) => Effect.Effect<PetBody, ClientError<"getPet">>
  readonly updatePet: (
    petId: PetId,
    patch: PetPatchBody,
    options?: ChangeOptions
  ) => Effect.Effect<UpdatedPet, ClientError<"updatePet">>
  readonly deletePet: (petId: PetId, options?: ChangeOptions) => Effect.Effect<void, ClientError<"deletePet">>
  readonly listOrders: (query?: OrdersQuery) => Effect.Effect<OrdersPage, ClientError<"listOrders">>
  readonly placeOrder: (
    body: NewOrderBody,
    options?: CreateOptions
  ) => Effect.Effect<PlacedOrder, ClientError<"placeOrder">>
  readonly getOrder: (orderId: OrderId) => Effect.Effect<OrderBody, ClientError<"getOrder">>
  readonly approveOrder: (orderId: OrderId) => Effect.Effect<OrderBody, ClientError<"approveOrder">>
  readonly deliverOrder: (orderId: OrderId) => Effect.Effect<OrderBody, ClientError<"deliverOrder">>
  readonly cancelOrder: (orderId: OrderId) => Effect.Effect<OrderBody, ClientError<"cancelOrder">>
  readonly getInventory: () => Effect.Effect<Inventory, ClientError<"getInventory">>
  readonly createWebhook: (
    body: NewWebhookBody,
    options?: CreateOptions
  ) => Effect.Effect<IssuedWebhookBody, ClientError<"createWebhook">>
  readonly listWebhooks: () => Effect.Effect<ReadonlyArray<WebhookBody>, ClientError<"listWebhooks">>
  readonly getWebhook: (webhookId: WebhookId) => Effect.Effect<WebhookBody, ClientError<"getWebhook">>
  /** `{ state: "active" }` re-enables a disabled subscription, its deliveries resumed from its cursor. */
  readonly updateWebhook: (
    webhookId: WebhookId,
    patch: WebhookPatchBody
  ) => Effect.Effect<WebhookBody, ClientError<"updateWebhook">>
  readonly deleteWebhook: (webhookId: WebhookId) => Effect.Effect<void, ClientError<"deleteWebhook">>
  readonly rotateWebhookSecret: (webhookId: WebhookId) => Effect.Effect<IssuedWebhookBody, ClientError<"rotateWebhookSecret">>
  /** Sends the subscription a signed `ping` now, and answers what its receiver said; records and changes nothing. */
  readonly pingWebhook: (webhookId: WebhookId) => Effect.Effect<WebhookPingBody, ClientError<"pingWebhook">>
  readonly listWebhookDeliveries: (
    webhookId: WebhookId,
    page?: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
  ) => Effect.Effect<DeliveriesPage, ClientError<"listWebhookDeliveries">>
  /** A page of the feed of changes (the Server-Sent Events stream of the same path is not this client's). */
  readonly listEvents: (query?: EventsQuery) => Effect.Effect<EventsPage, ClientError<"listEvents">>
  /** Uploads a photo of the pet, from a Blob (a browser's File) or bytes, as a form's `file` part. */
  readonly uploadPetPhoto: (
    petId: PetId,
    image: Blob | Uint8Array,
    options?: UploadOptions
  ) => Effect.Effect<UploadedPhoto, ClientError<"uploadPetPhoto">>
  readonly listPetPhotos: (petId: PetId) => Effect.Effect<ReadonlyArray<PhotoBody>, ClientError<"listPetPhotos">>
  readonly deletePetPhoto: (petId: PetId, photoId: PhotoId) => Effect.Effect<void, ClientError<"deletePetPhoto">>
  /** effect's `HttpApiClient` for the same API (1.x's client: `raw.animals.getPet({ params: { petId } })`). */
  readonly raw: HttpApiClient.ForApi<typeof Api>
}

// The API's paths already start with /v1, while the spec's base addresses end with it.
const origin = (baseUrl: string | URL): string => String(baseUrl).replace(/\/+$/, "").replace(/\/v1$/, "")

const NEXT_LINK = /<([^>]*)>\s*;\s*rel="?next"?/

/** The cursor (`name`) of a `Link: <...?cursor=...>; rel="next"` header, as the server wrote it. */
const nextCursor = (link: string | undefined, name = "cursor"): string | undefined => {
  const target = link === undefined ? undefined : NEXT_LINK.exec(link)?.[1]
  return target === undefined ? undefined : new URL(target, "http://link.invalid").searchParams.get(name) ?? undefined
}

// The query schema takes the key (an id, a tag) a cursor stands for; the caller holds the cursor text.
const cursorId = <A, S extends Schema.Codec<A, string>>(schema: S, cursor: string | undefined) =>
  cursor === undefined
    ? Effect.succeed(undefined)
    : Schema.decodeEffect(schema)(cursor).pipe(
      Effect.mapError(() => new InvalidRequest({ message: "cursor: is not a cursor this service issued" }))
    )

const idempotencyHeaders = (options: CreateOptions | undefined) =>
  options?.idempotencyKey === undefined ? {} : { "idempotency-key": options.idempotencyKey }

const ifMatchHeaders = (options: ChangeOptions | undefined) =>
  options?.ifMatch === undefined ? {} : { "if-match": options.ifMatch }

const make = (options: ClientOptions) =>
  Effect.gen(function*() {
    const raw = yield* HttpApiClient.make(Api, {
      transformClient: HttpClient.mapRequest((request) =>
        request.pipe(
          HttpClientRequest.prependUrl(origin(options.baseUrl)),
          HttpClientRequest.bearerToken(
            typeof options.apiKey === "string" ? options.apiKey : Redacted.value(options.apiKey)
          )
        )
      )
    })
    const operations: AnimalStoreOperations = {
      listPets: Effect.fn("AnimalStoreClient.listPets")(function*({ cursor, ...filters }: PetsQuery = {}) {
        const after = yield* cursorId(CursorParam, cursor)
        const { body, headers } = yield* raw.animals.listPets({
          query: after === undefined ? filters : { ...filters, cursor: after }
        })
        return { pets: body, next: nextCursor(headers.link) }
      }),
      listTags: Effect.fn("AnimalStoreClient.listTags")(
        function*({ cursor, limit }: { readonly limit?: number | undefined; readonly cursor?: string | undefined } = {}) {
          const after = yield* cursorId(TagCursorParam, cursor)
          const { body, headers } = yield* raw.animals.listTags({
            query: { ...(limit === undefined ? {} : { limit }), ...(after === undefined ? {} : { cursor: after }) }
          })
          return { tags: body, next: nextCursor(headers.link) }
        }
      ),
      createPet: Effect.fn("AnimalStoreClient.createPet")(function*(body: NewPetBody, options?: CreateOptions) {
        const created = yield* raw.animals.createPet({ headers: idempotencyHeaders(options), payload: body })
        return { pet: created.body, location: created.headers.location, etag: created.headers.etag }
      }),
      getPet: Effect.fn("AnimalStoreClient.getPet")(function*(petId: PetId) {
        return yield* raw.animals.getPet({ params: { petId } })
      }),
      updatePet: Effect.fn("AnimalStoreClient.updatePet")(
        function*(petId: PetId, patch: PetPatchBody, options?: ChangeOptions) {
          const updated = yield* raw.animals.updatePet({ params: { petId }, headers: ifMatchHeaders(options), payload: patch })
          return { pet: updated.body, etag: updated.headers.etag }
        }
      ),
      deletePet: Effect.fn("AnimalStoreClient.deletePet")(function*(petId: PetId, options?: ChangeOptions) {
        yield* raw.animals.deletePet({ params: { petId }, headers: ifMatchHeaders(options) })
      }),
      listOrders: Effect.fn("AnimalStoreClient.listOrders")(function*({ cursor, ...filters }: OrdersQuery = {}) {
        const after = yield* cursorId(OrderCursorParam, cursor)
        const { body, headers } = yield* raw.store.listOrders({
          query: after === undefined ? filters : { ...filters, cursor: after }
        })
        return { orders: body, next: nextCursor(headers.link) }
      }),
      placeOrder: Effect.fn("AnimalStoreClient.placeOrder")(function*(body: NewOrderBody, options?: CreateOptions) {
        const placed = yield* raw.store.placeOrder({ headers: idempotencyHeaders(options), payload: body })
        return { order: placed.body, location: placed.headers.location }
      }),
      getOrder: Effect.fn("AnimalStoreClient.getOrder")(function*(orderId: OrderId) {
        return yield* raw.store.getOrder({ params: { orderId } })
      }),
      approveOrder: Effect.fn("AnimalStoreClient.approveOrder")(function*(orderId: OrderId) {
        return yield* raw.store.approveOrder({ params: { orderId } })
      }),
      deliverOrder: Effect.fn("AnimalStoreClient.deliverOrder")(function*(orderId: OrderId) {
        return yield* raw.store.deliverOrder({ params: { orderId } })
      }),
      cancelOrder: Effect.fn("AnimalStoreClient.cancelOrder")(function*(orderId: OrderId) {
        return yield* raw.store.cancelOrder({ params: { orderId } })
      }),
      getInventory: Effect.fn("AnimalStoreClient.getInventory")(function*() {
        return yield* raw.store.getInventory()
      }),
      createWebhook: Effect.fn("AnimalStoreClient.createWebhook")(function*(body: NewWebhookBody, options?: CreateOptions) {
        return (yield* raw.webhooks.createWebhook({ headers: idempotencyHeaders(options), payload: body })).body
      }),
      listWebhooks: Effect.fn("AnimalStoreClient.listWebhooks")(function*() {
        return yield* raw.webhooks.listWebhooks()
      }),
      getWebhook: Effect.fn("AnimalStoreClient.getWebhook")(function*(webhookId: WebhookId) {
        return yield* raw.webhooks.getWebhook({ params: { webhookId } })
      }),
      updateWebhook: Effect.fn("AnimalStoreClient.updateWebhook")(function*(webhookId: WebhookId, patch: WebhookPatchBody) {
        return yield* raw.webhooks.updateWebhook({ params: { webhookId }, payload: patch })
      }),
      deleteWebhook: Effect.fn("AnimalStoreClient.deleteWebhook")(function*(webhookId: WebhookId) {
        yield* raw.webhooks.deleteWebhook({ params: { webhookId } })
      }),
      rotateWebhookSecret: Effect.fn("AnimalStoreClient.rotateWebhookSecret")(function*(webhookId: WebhookId) {
        return yield* raw.webhooks.rotateWebhookSecret({ params: { webhookId } })
      }),
      pingWebhook: Effect.fn("AnimalStoreClient.pingWebhook")(function*(webhookId: WebhookId) {
        return yield* raw.webhooks.pingWebhook({ params: { webhookId } })
      }),
      listWebhookDeliveries: Effect.fn("AnimalStoreClient.listWebhookDeliveries")(
        function*(webhookId: WebhookId, { cursor, limit }: { readonly limit?: number | undefined; readonly cursor?: string | undefined } = {}) {
          const after = yield* cursorId(DeliveryCursorParam, cursor)
          const { body, headers } = yield* raw.webhooks.listWebhookDeliveries({
            params: { webhookId },
            query: { ...(limit === undefined ? {} : { limit }), ...(after === undefined ? {} : { cursor: after }) }
          })
          return { deliveries: body, next: nextCursor(headers.link) }
        }
      ),
      listEvents: Effect.fn("AnimalStoreClient.listEvents")(function*(query: EventsQuery = {}) {
        const { body, headers } = yield* raw.events.listEvents({ query, headers: {} })
        const next = nextCursor(headers.link, "after")
        return { events: body, next: next === undefined ? undefined : EventId.make(BigInt(next)) }
      }),
      // A form, whatever the image: a Blob keeps its own type, bytes take the one given.
      uploadPetPhoto: Effect.fn("AnimalStoreClient.uploadPetPhoto")(
        function*(petId: PetId, image: Blob | Uint8Array, options?: UploadOptions) {
          const form = new FormData()
          const file = image instanceof Blob
            ? image
            : new Blob([image as Uint8Array<ArrayBuffer>], { type: options?.contentType ?? "application/octet-stream" })
          form.append("file", file, options?.fileName ?? "photo")
          const created = yield* raw.photos.uploadPetPhoto({
            params: { petId },
            headers: idempotencyHeaders(options),
            payload: form
          })
          return { photo: created.body, location: created.headers.location }
        }
      ),
      listPetPhotos: Effect.fn("AnimalStoreClient.listPetPhotos")(function*(petId: PetId) {
        return yield* raw.photos.listPetPhotos({ params: { petId } })
      }),
      deletePetPhoto: Effect.fn("AnimalStoreClient.deletePetPhoto")(function*(petId: PetId, photoId: PhotoId) {
        yield* raw.photos.deletePetPhoto({ params: { petId, photoId } })
      }),
      raw
    }
    return operations
  })

/**
 * A typed client for the Animal Store HTTP API, derived from the same API definition as
 * the server: `client.getPet(petId)` returns the pet or fails with the typed `NotFound`,
 * `Unauthorized`, `InvalidRequest`… errors; `client.listPets({ status })` a page
 * `{ pets, next }`. int64 fields are `bigint`, exact in both directions.
 */
export class AnimalStoreClient extends Context.Service<AnimalStoreClient, AnimalStoreOperations>()(
  "animal-store/http/AnimalStoreClient"
) {
  /** Builds the client on the HttpClient in context (e.g. `FetchHttpClient.layer`). */
  static readonly layer = (options: ClientOptions): Layer.Layer<AnimalStoreClient, never, HttpClient.HttpClient> =>
    Layer.effect(AnimalStoreClient, make(options))
}
