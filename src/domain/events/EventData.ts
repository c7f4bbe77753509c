import { DateTime } from "effect"
import type { Order } from "../orders/Order.ts"
import type { Pet } from "../pets/Pet.ts"
import { sameTags } from "../pets/PetTag.ts"
import type { Photo } from "../photos/Photo.ts"
import { parseInt64Json } from "../Int64Json.ts"

/**
 * An event's `data`: a JSON value whose integers are `bigint`, so that an int64 keeps
 * every digit between the change and the reader. Written by {@link eventDataText}, read
 * back by {@link parseEventData}.
 */
export type EventData = bigint | string | boolean | null | ReadonlyArray<EventData> | { readonly [key: string]: EventData }

/**
 * A pet as the API writes it (PetsApi's `Pet`): the same keys, in the same order, its
 * `version` (the ETag's) included.
 */
export const petData = (pet: Pet): EventData =>
  pet.status === undefined
    ? { id: pet.id, name: pet.name, categoryId: pet.categoryId, tags: pet.tags, version: BigInt(pet.version) }
    : { id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status, tags: pet.tags, version: BigInt(pet.version) }

/**
 * A `pet.updated` event's data: the pet after the change, as {@link petData} writes it,
 * and `changed`, the names of the fields the change set or removed (empty for a patch
 * that set every field to what it was); `tags` when the list changed, its order included.
 */
export const petUpdatedData = (before: Pet, after: Pet): EventData => ({
  ...(petData(after) as { readonly [key: string]: EventData }),
  changed: [
    ...(["name", "categoryId", "status"] as const).filter((field) => before[field] !== after[field]),
    ...(sameTags(before.tags, after.tags) ? [] : ["tags"])
  ]
})

/**
 * A photo as the API writes it (PhotosApi's `Photo`) without its rendition URLs: they are
 * signed and expire, so an event that outlives them carries none.
 */
export const photoData = (photo: Photo): EventData => ({
  id: photo.id,
  petId: photo.petId,
  contentType: photo.contentType,
  width: BigInt(photo.width),
  height: BigInt(photo.height),
  bytes: BigInt(photo.bytes),
  createdAt: DateTime.formatIso(photo.createdAt)
})

/** An order as the API writes it (StoreApi's `Order`): RFC 3339 UTC times. */
export const orderData = (order: Order): EventData => ({
  id: order.id,
  petId: order.petId,
  quantity: BigInt(order.quantity),
  status: order.status,
  complete: order.complete,
  createdAt: DateTime.formatIso(order.createdAt),
  updatedAt: DateTime.formatIso(order.updatedAt)
})

// Node 24's JSON.rawJSON writes a bigint's digits verbatim (declared in JsonInt64.ts).
const bigintsAsDigits = (_key: string, value: unknown): unknown =>
  typeof value === "bigint" ? JSON.rawJSON(value.toString()) : value

/** The JSON text of `data` (or of any value holding bigints), integers with every digit. */
export const eventDataText = (data: unknown): string => JSON.stringify(data, bigintsAsDigits)

/** The data of {@link eventDataText}'s text. */
export const parseEventData = (text: string): EventData => parseInt64Json(text) as EventData
