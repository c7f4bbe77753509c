import { DateTime } from "effect"
import type { Order } from "../orders/Order.ts"
import type { Pet } from "../pets/Pet.ts"

/**
 * An event's `data`: a JSON value whose integers are `bigint`, so that an int64 keeps
 * every digit between the change and the reader. Written by {@link eventDataText}, read
 * back by {@link parseEventData}.
 */
export type EventData = bigint | string | boolean | null | ReadonlyArray<EventData> | { readonly [key: string]: EventData }

/** A pet as the API writes it (PetsApi's `Pet`): the same keys, in the same order. */
export const petData = (pet: Pet): EventData =>
  pet.status === undefined
    ? { id: pet.id, name: pet.name, categoryId: pet.categoryId }
    : { id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status }

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

const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/

/**
 * `JSON.parse` reviver that turns every integer literal into a `bigint` with its exact
 * digits. Fractions and exponents (`1.5`, `1e3`, `1.0`) stay numbers, so an int64 field
 * can refuse them instead of silently accepting a rounded value.
 */
export const int64Reviver = (_key: string, value: unknown, context?: { readonly source?: string }): unknown =>
  typeof value === "number" && context?.source !== undefined && INTEGER_LITERAL.test(context.source)
    ? BigInt(context.source)
    : value

// Node 24's JSON.rawJSON writes a bigint's digits verbatim (declared in JsonInt64.ts).
const bigintsAsDigits = (_key: string, value: unknown): unknown =>
  typeof value === "bigint" ? JSON.rawJSON(value.toString()) : value

/** The JSON text of `data` (or of any value holding bigints), integers with every digit. */
export const eventDataText = (data: unknown): string => JSON.stringify(data, bigintsAsDigits)

/** The data of {@link eventDataText}'s text. */
export const parseEventData = (text: string): EventData => JSON.parse(text, int64Reviver as never) as EventData
