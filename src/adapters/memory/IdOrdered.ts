/**
 * A list kept in ascending id order, the in-memory counterpart of an `(…, id)` index:
 * keyset pages are a binary search plus a slice, and an entry can move between lists
 * (a pet changing status) without breaking the order of either.
 */
export class IdOrdered<A extends { readonly id: bigint }> {
  readonly #items: Array<A> = []

  /** How many entries the list holds. */
  get size(): number {
    return this.#items.length
  }

  /** Adds `item`, which must not be in the list yet, at its place by id. */
  add(item: A): void {
    // Ids are assigned in increasing order, so a new entry is usually the last.
    const last = this.#items[this.#items.length - 1]
    if (last === undefined || last.id < item.id) this.#items.push(item)
    else this.#items.splice(this.#firstAfter(item.id), 0, item)
  }

  /** Removes the entry with `id`, if any. */
  remove(id: bigint): void {
    const index = this.#indexOf(id)
    if (index !== undefined) this.#items.splice(index, 1)
  }

  /** Removes the first `count` entries, those with the lowest ids. */
  removeFirst(count: number): void {
    if (count > 0) this.#items.splice(0, count)
  }

  /** Puts `item` in place of the entry with the same id. */
  replace(item: A): void {
    const index = this.#indexOf(item.id)
    if (index === undefined) throw new Error(`no entry with id ${item.id} to replace`)
    this.#items[index] = item
  }

  /** Up to `limit` entries with an id greater than `after`, ascending by id. */
  page(after: bigint | undefined, limit: number): Array<A> {
    const start = after === undefined ? 0 : this.#firstAfter(after)
    return this.#items.slice(start, start + limit)
  }

  /** Up to `limit` entries with an id greater than `after` that satisfy `keep`, ascending by id. */
  pageWhere(after: bigint | undefined, limit: number, keep: (item: A) => boolean): Array<A> {
    const page: Array<A> = []
    for (let i = after === undefined ? 0 : this.#firstAfter(after); i < this.#items.length && page.length < limit; i++) {
      const item = this.#items[i]!
      if (keep(item)) page.push(item)
    }
    return page
  }

  // Index of the first entry whose id is greater than `id`.
  #firstAfter(id: bigint): number {
    let lo = 0
    let hi = this.#items.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.#items[mid]!.id <= id) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  #indexOf(id: bigint): number | undefined {
    const index = this.#firstAfter(id) - 1
    return index >= 0 && this.#items[index]!.id === id ? index : undefined
  }
}
