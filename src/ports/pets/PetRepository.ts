import { Context, type Effect } from "effect"
import type { NewPet } from "../../domain/pets/NewPet.ts"
import type { PetChanged, PetHasOpenOrder, PetNotFound, StoreUnavailable } from "../../domain/Errors.ts"
import type { Pet } from "../../domain/pets/Pet.ts"
import type { PetPrecondition } from "../../domain/pets/PetChanges.ts"
import type { PetId } from "../../domain/pets/PetId.ts"
import type { PetInventory } from "../../domain/pets/PetInventory.ts"
import type { PetPatch } from "../../domain/pets/PetPatch.ts"
import type { PetQuery, TagCount, TagQuery } from "../../domain/pets/PetQuery.ts"

/**
 * Where pets are kept. Every adapter (memory, embedded, PostgreSQL) passes the
 * same contract suite: ids start at 1 and increase, `create` is durable once it
 * succeeds, and `list` is a keyset scan in ascending id order. `update` and `delete` decide
 * through the domain (PetChanges) and are each one atomic step: a deleted pet is kept for
 * the orders that name it, but no read, list, count or new order sees it again.
 */
export class PetRepository extends Context.Service<PetRepository, {
  /** Stores a new pet and returns it with its assigned id. */
  readonly create: (pet: NewPet) => Effect.Effect<Pet, StoreUnavailable>
  /** Reads one pet by id. */
  readonly get: (id: PetId) => Effect.Effect<Pet, PetNotFound | StoreUnavailable>
  /** Applies `patch` (one version on) if `precondition` holds and orders do not own the status. */
  readonly update: (
    id: PetId,
    patch: PetPatch,
    precondition: PetPrecondition
  ) => Effect.Effect<Pet, PetNotFound | PetChanged | PetHasOpenOrder | StoreUnavailable>
  /** Retires the pet (kept for its orders' history) if `precondition` holds and no order for it is open. */
  readonly delete: (
    id: PetId,
    precondition: PetPrecondition
  ) => Effect.Effect<void, PetNotFound | PetChanged | PetHasOpenOrder | StoreUnavailable>
  /**
   * Up to `limit` pets with id greater than `after`, ascending by id; optionally only those
   * with `status`, carrying all of `tags`, whose name contains `q` (through searchKey). A
   * tag filter's cost does not grow with the catalogue; a search's may on the memory store.
   */
  readonly list: (query: PetQuery) => Effect.Effect<ReadonlyArray<Pet>, StoreUnavailable>
  /** The tags pets carry (retired pets' aside), each with how many carry it, from kept counts: a page in tag order. */
  readonly tags: (query: TagQuery) => Effect.Effect<ReadonlyArray<TagCount>, StoreUnavailable>
  /** How many pets are in each status, and without one, at one instant. */
  readonly inventory: Effect.Effect<PetInventory, StoreUnavailable>
  /** Succeeds when the store can serve requests right now. */
  readonly ready: Effect.Effect<void, StoreUnavailable>
}>()("animal-store/ports/PetRepository") {}
