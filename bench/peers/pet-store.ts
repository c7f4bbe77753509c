/**
 * The storage port of the Fastify peers: what the HTTP layer needs, whatever holds the
 * pets. Ids and category ids are bigint end to end so no int64 loses precision.
 */

export const PET_STATUSES = ["available", "pending", "sold"] as const
export type PetStatus = (typeof PET_STATUSES)[number]

export interface NewPet {
  readonly name: string
  readonly categoryId: bigint
  readonly status?: PetStatus
}

export interface Pet extends NewPet {
  readonly id: bigint
}

export interface PageQuery {
  readonly limit: number
  readonly status: PetStatus | undefined
  /** Keyset cursor: only pets with a greater id. */
  readonly after: bigint | undefined
}

export interface PetStore {
  readonly create: (pet: NewPet) => Promise<Pet>
  readonly get: (id: bigint) => Promise<Pet | undefined>
  /** Pets in id order. */
  readonly list: (query: PageQuery) => Promise<ReadonlyArray<Pet>>
  readonly close: () => Promise<void>
}
