/**
 * The Effect floor's storage port: the PetStore operations as Effects, so that a store
 * built on Effect (the @effect/sql-pg one) runs its statements in the request's fiber, as
 * Animal Store's adapters do, with no runPromise per request. The Promise stores (the Map
 * and node-postgres) are wrapped once, each call a `tryPromise`, as the floor always ran them.
 */
import { Effect, type Scope } from "effect"
import type { PeerArgs } from "./peer-args.ts"
import type { NewPet, PageQuery, Pet, PetStore } from "./pet-store.ts"

export interface EffectPetStore {
  readonly create: (pet: NewPet) => Effect.Effect<Pet, unknown>
  readonly get: (id: bigint) => Effect.Effect<Pet | undefined, unknown>
  /** Pets in id order. */
  readonly list: (query: PageQuery) => Effect.Effect<ReadonlyArray<Pet>, unknown>
}

export const fromPromises = (store: PetStore): EffectPetStore => ({
  create: (pet) => Effect.tryPromise(() => store.create(pet)),
  get: (id) => Effect.tryPromise(() => store.get(id)),
  list: (query) => Effect.tryPromise(() => store.list(query))
})

/**
 * The store the peer's arguments name, closed with the scope. Each driver is loaded only
 * when named, so that no server holds a driver it does not use (peak RSS is compared).
 */
export const openEffectStore = (args: PeerArgs): Effect.Effect<EffectPetStore, unknown, Scope.Scope> => {
  const url = args.databaseUrl ?? ""
  if (args.store === "sqlpg") {
    return Effect.flatMap(Effect.promise(() => import("./sqlpg-store.ts")), ({ makeSqlPgStore }) => makeSqlPgStore(url))
  }
  const open = args.store === "pg"
    ? () => import("./pg-store.ts").then(({ makePgStore }) => makePgStore(url))
    : () => import("./map-store.ts").then(({ makeMapStore }) => makeMapStore())
  return Effect.map(
    Effect.acquireRelease(Effect.tryPromise(open), (store) => Effect.promise(() => store.close())),
    fromPromises
  )
}
