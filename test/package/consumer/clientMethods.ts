// Every method of the typed client, each called from an exported function whose type is
// inferred. The package test compiles this file with `declaration: true` (as `tsc --init`
// sets it), so every type a method can expose (its value, its errors, the schemas inside
// them) must be nameable from the package's entry points: TS2742 or TS2883 otherwise.
import { AnimalStoreClient, type AnimalStoreOperations } from "animal-store/client"
import type {
  ChangeOptions,
  CreateOptions,
  EventsQuery,
  NewOrderBody,
  NewPetBody,
  NewWebhookBody,
  OrderBody,
  OrdersQuery,
  PetBody,
  PetPatchBody,
  PetsQuery,
  PhotoBody,
  UploadOptions,
  WebhookBody,
  WebhookPatchBody
} from "animal-store/client"
import { Effect } from "effect"

// Only `animal-store/client` is imported: what its methods expose must be named from there.
type PetId = PetBody["id"]
type OrderId = OrderBody["id"]
type WebhookId = WebhookBody["id"]
type PhotoId = PhotoBody["id"]

// Each takes `Unauthorized` out of the operation's errors, so that the rest is spelled out
// in the declaration class by class (`ClientError<"listEvents">` would name them at once).

/** Missing a method (one added to the client later) fails to compile here. */
type EveryMethod = { readonly [K in Exclude<keyof AnimalStoreOperations, "raw">]: unknown }

export const listPets = (query?: PetsQuery) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.listPets(query)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const createPet = (body: NewPetBody, options?: CreateOptions) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.createPet(body, options)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const getPet = (petId: PetId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.getPet(petId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const updatePet = (petId: PetId, patch: PetPatchBody, options?: ChangeOptions) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.updatePet(petId, patch, options)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const deletePet = (petId: PetId, options?: ChangeOptions) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.deletePet(petId, options)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const listOrders = (query?: OrdersQuery) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.listOrders(query)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const placeOrder = (body: NewOrderBody, options?: CreateOptions) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.placeOrder(body, options)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const getOrder = (orderId: OrderId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.getOrder(orderId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const approveOrder = (orderId: OrderId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.approveOrder(orderId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const deliverOrder = (orderId: OrderId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.deliverOrder(orderId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const cancelOrder = (orderId: OrderId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.cancelOrder(orderId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const getInventory = () =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.getInventory()
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const createWebhook = (body: NewWebhookBody, options?: CreateOptions) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.createWebhook(body, options)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const listWebhooks = () =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.listWebhooks()
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const getWebhook = (webhookId: WebhookId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.getWebhook(webhookId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const updateWebhook = (webhookId: WebhookId, patch: WebhookPatchBody) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.updateWebhook(webhookId, patch)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const deleteWebhook = (webhookId: WebhookId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.deleteWebhook(webhookId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const rotateWebhookSecret = (webhookId: WebhookId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.rotateWebhookSecret(webhookId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const pingWebhook = (webhookId: WebhookId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.pingWebhook(webhookId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const listWebhookDeliveries = (webhookId: WebhookId, page?: { readonly limit?: number; readonly cursor?: string }) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.listWebhookDeliveries(webhookId, page)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const listEvents = (query?: EventsQuery) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.listEvents(query)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))

export const listTags = (page?: { readonly limit?: number; readonly cursor?: string }) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.listTags(page)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))

export const uploadPetPhoto = (petId: PetId, image: Blob | Uint8Array, options?: UploadOptions) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.uploadPetPhoto(petId, image, options)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const listPetPhotos = (petId: PetId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.listPetPhotos(petId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const deletePetPhoto = (petId: PetId, photoId: PhotoId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.deletePetPhoto(petId, photoId)
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))

/** The fields of what the methods answer, read through: the schemas inside the values must be nameable too. */
export const firstTag = () => Effect.map(listTags(), ({ tags }) => tags[0]?.pets)
export const firstEvent = (query?: EventsQuery) =>
  Effect.map(listEvents(query), ({ events }) => events[0]?.data)
export const firstDelivery = (webhookId: WebhookId) =>
  Effect.map(listWebhookDeliveries(webhookId), ({ deliveries }) => deliveries[0])
export const issuedSecret = (webhookId: WebhookId) => Effect.map(rotateWebhookSecret(webhookId), (issued) => issued.secret)
export const pingAnswer = (webhookId: WebhookId) =>
  Effect.map(pingWebhook(webhookId), ({ outcome, sentAt }) => ({ outcome, sentAt }))

export const everyMethod = {
  listPets,
  listTags,
  createPet,
  getPet,
  updatePet,
  deletePet,
  listOrders,
  placeOrder,
  getOrder,
  approveOrder,
  deliverOrder,
  cancelOrder,
  getInventory,
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  pingWebhook,
  listWebhookDeliveries,
  listEvents,
  uploadPetPhoto,
  listPetPhotos,
  deletePetPhoto
} satisfies EveryMethod

/** `raw`, effect's client for the same API: its answers are the wire schemas' types. */
export const rawListEvents = (query: EventsQuery) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.raw.events.listEvents({ query, headers: {} })
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const rawGetPet = (petId: PetId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.raw.animals.getPet({ params: { petId } })
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
export const rawListWebhookDeliveries = (webhookId: WebhookId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return yield* client.raw.webhooks.listWebhookDeliveries({ params: { webhookId }, query: {} })
  }).pipe(Effect.catchTag("Unauthorized", (error) => Effect.die(error)))
