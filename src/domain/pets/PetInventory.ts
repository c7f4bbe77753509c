/** How many pets the store holds in each status, and without one. */
export interface PetInventory {
  readonly available: number
  readonly pending: number
  readonly sold: number
  /** Pets stored without a status. */
  readonly none: number
}
