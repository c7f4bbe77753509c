import type { DateTime } from "effect"
import { Order } from "../../../domain/orders/Order.ts"
import { OrderId } from "../../../domain/orders/OrderId.ts"
import type { OrderQuery } from "../../../domain/orders/OrderQuery.ts"
import { isComplete, isOpen, OrderStatus } from "../../../domain/orders/OrderStatus.ts"
import type { PetId } from "../../../domain/pets/PetId.ts"
import { IdOrdered } from "../IdOrdered.ts"

/**
 * The orders of the in-memory store, with the indexes the queries need: by id, all in
 * id order, per status, per pet and per pet and status in id order. Synchronous, like PetTable, so that an
 * order and its pet can change in one step.
 */
export class OrderTable {
  readonly #byId = new Map<bigint, Order>()
  readonly #all = new IdOrdered<Order>()
  readonly #byStatus = new Map<OrderStatus, IdOrdered<Order>>(
    OrderStatus.literals.map((status) => [status, new IdOrdered()])
  )
  readonly #byPet = new Map<bigint, IdOrdered<Order>>()
  // A pet can be ordered and cancelled without end: its orders in one status have their own list.
  readonly #byPetStatus = new Map<string, IdOrdered<Order>>()
  #lastId = 0n

  #ofPetInStatus(petId: PetId, status: OrderStatus): IdOrdered<Order> {
    const key = `${petId}:${status}`
    let list = this.#byPetStatus.get(key)
    if (list === undefined) this.#byPetStatus.set(key, list = new IdOrdered())
    return list
  }

  /** Stores a new order for `petId` in `status`, created at `now`, under the next id. */
  insert(petId: PetId, status: OrderStatus, now: DateTime.Utc): Order {
    this.#lastId += 1n
    const order = new Order({
      id: OrderId.make(this.#lastId),
      petId,
      quantity: 1,
      status,
      complete: isComplete(status),
      createdAt: now,
      updatedAt: now
    })
    this.#byId.set(order.id, order)
    this.#all.add(order)
    this.#byStatus.get(status)!.add(order)
    let mine = this.#byPet.get(petId)
    if (mine === undefined) this.#byPet.set(petId, mine = new IdOrdered())
    mine.add(order)
    this.#ofPetInStatus(petId, status).add(order)
    return order
  }

  /** The order with `id`, if any. */
  get(id: OrderId): Order | undefined {
    return this.#byId.get(id)
  }

  /** Whether the pet has an open order (placed or approved). */
  hasOpen(petId: PetId): boolean {
    return OrderStatus.literals.some((status) =>
      isOpen(status) && (this.#byPetStatus.get(`${petId}:${status}`)?.size ?? 0) > 0
    )
  }

  /** Moves the order with `id` (which must exist) to `status` at `now`. */
  setStatus(id: OrderId, status: OrderStatus, now: DateTime.Utc): Order {
    const before = this.#byId.get(id)
    if (before === undefined) throw new Error(`no order ${id} to update`)
    const after = new Order({ ...before, status, complete: isComplete(status), updatedAt: now })
    this.#byId.set(id, after)
    this.#all.replace(after)
    this.#byPet.get(after.petId)!.replace(after)
    if (before.status === status) {
      this.#byStatus.get(status)!.replace(after)
      this.#ofPetInStatus(after.petId, status).replace(after)
    } else {
      this.#byStatus.get(before.status)!.remove(id)
      this.#byStatus.get(status)!.add(after)
      this.#ofPetInStatus(after.petId, before.status).remove(id)
      this.#ofPetInStatus(after.petId, status).add(after)
    }
    return after
  }

  /** One keyset page, as OrderRepository.list describes it. */
  page(query: OrderQuery): Array<Order> {
    if (query.petId !== undefined) {
      const mine = query.status === undefined
        ? this.#byPet.get(query.petId)
        : this.#byPetStatus.get(`${query.petId}:${query.status}`)
      return mine === undefined ? [] : mine.page(query.after, query.limit)
    }
    const source = query.status === undefined ? this.#all : this.#byStatus.get(query.status)!
    return source.page(query.after, query.limit)
  }
}
