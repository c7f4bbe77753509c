/**
 * The decisions on a change of an existing pet (a patch or a delete), the same for every
 * store: the precondition first (RFC 9110: If-Match is evaluated before the method's own
 * rules), then the orders' ownership of the status while one is open.
 */
import { Result } from "effect"
import { PetChanged, PetHasOpenOrder } from "../Errors.ts"
import type { Pet } from "./Pet.ts"
import { applyPatch, type PetPatch, touchesStatus } from "./PetPatch.ts"
import type { PetVersion } from "./PetVersion.ts"

/**
 * A change's condition: the versions the caller saw (from `If-Match`); the change applies
 * only if the pet is still at one of them. Absent: no condition, the change applies.
 */
export interface PetPrecondition {
  readonly ifMatch?: ReadonlyArray<PetVersion> | undefined
}

/** What the store knows of the pet when it decides: the pet as stored, and whether an order for it is open. */
export interface PetState {
  readonly pet: Pet
  readonly hasOpenOrder: boolean
}

const holds = (pet: Pet, precondition: PetPrecondition): Result.Result<void, PetChanged> =>
  precondition.ifMatch === undefined || precondition.ifMatch.includes(pet.version)
    ? Result.void
    : Result.fail(new PetChanged({ id: pet.id }))

/** The pet after `patch`, or why it is refused. */
export const decideUpdate = (
  state: PetState,
  patch: PetPatch,
  precondition: PetPrecondition
): Result.Result<Pet, PetChanged | PetHasOpenOrder> =>
  Result.flatMap(holds(state.pet, precondition), () =>
    state.hasOpenOrder && touchesStatus(patch)
      ? Result.fail(new PetHasOpenOrder({ id: state.pet.id }))
      : Result.succeed(applyPatch(state.pet, patch)))

/** Whether the pet may be deleted, or why not. */
export const decideDelete = (
  state: PetState,
  precondition: PetPrecondition
): Result.Result<void, PetChanged | PetHasOpenOrder> =>
  Result.flatMap(holds(state.pet, precondition), () =>
    state.hasOpenOrder ? Result.fail(new PetHasOpenOrder({ id: state.pet.id })) : Result.void)
