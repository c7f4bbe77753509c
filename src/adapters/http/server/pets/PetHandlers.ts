/** The `animals` operations: listPets, listTags, createPet, updatePet, deletePet and the deprecated getPet. */
import { Effect } from "effect"
import { createPetIdentity } from "../../../../domain/idempotency/IdempotentRequest.ts"
import { NewPet } from "../../../../domain/pets/NewPet.ts"
import type { Pet } from "../../../../domain/pets/Pet.ts"
import { PetPatch } from "../../../../domain/pets/PetPatch.ts"
import { PAGE_LIMIT_DEFAULT } from "../../../../domain/paging/PageLimit.ts"
import { PetRepository } from "../../../../ports/pets/PetRepository.ts"
import { Api } from "../../api/Api.ts"
import { cursorOf, tagCursorOf } from "../../api/PathAndQuery.ts"
import { etagOf, preconditionOf } from "../../api/PetEntityTag.ts"
import { petJson, petsJson } from "../../api/PetJsonText.ts"
import type { Handlers, Input } from "../routing/ApiRouter.ts"
import { pathOf } from "../routing/EndpointPath.ts"
import { keysetPage } from "../routing/KeysetPage.ts"
import * as Reply from "../routing/Reply.ts"

const { getPet, listPets, listTags } = Api.groups.animals.endpoints
const petPath = pathOf<"petId">(getPet)

// The payload is decoded by NewPet's own fields, so its checks need not run again.
const newPet = ({ payload }: Input<"createPet">) => new NewPet(payload, { disableChecks: true })
// Likewise the patch, by PetPatch's.
const petPatch = ({ payload }: Input<"updatePet">) => new PetPatch(payload, { disableChecks: true })

// Every answer with a pet carries its ETag.
const etag = (pet: Pet) => ({ etag: etagOf(pet.version) })

/** The handlers over the PetRepository in context. */
export const make = Effect.gen(function*() {
  const pets = yield* PetRepository
  return {
  listPets: ({ query }) => {
    const limit = query.limit ?? PAGE_LIMIT_DEFAULT
    const filter = { limit: limit + 1, status: query.status, after: query.cursor, tags: query.tag, q: query.q }
    return Effect.map(pets.list(filter), (rows) => {
      const { link, page } = keysetPage(rows, {
        limit,
        path: listPets.path,
        filters: [["status", query.status], ["tag", query.tag], ["q", query.q]],
        cursorOf: (last) => cursorOf(last.id)
      })
      return Reply.ok(petsJson(page), link === undefined ? undefined : { link })
    })
  },
  listTags: ({ query }) => {
    const limit = query.limit ?? PAGE_LIMIT_DEFAULT
    return Effect.map(pets.tags({ limit: limit + 1, after: query.cursor }), (rows) => {
      const { link, page } = keysetPage(rows, {
        limit,
        path: listTags.path,
        filters: [],
        cursorOf: (last) => tagCursorOf(last.tag)
      })
      // Keys in TagCountJson's order; a tag is a slug and a count an integer, so JSON.stringify writes the schema's bytes.
      return Reply.ok(JSON.stringify(page), link === undefined ? undefined : { link })
    })
  },
  createPet: {
    identity: (input) => createPetIdentity(newPet(input)),
    handle: (input) =>
      Effect.map(pets.create(newPet(input)), (pet) => Reply.created(petJson(pet), petPath({ petId: pet.id }), etag(pet)))
  },
  getPet: ({ params }) => Effect.map(pets.get(params.petId), (pet) => Reply.ok(petJson(pet), etag(pet))),
  updatePet: (input) =>
    Effect.map(
      pets.update(input.params.petId, petPatch(input), preconditionOf(input.headers["if-match"])),
      (pet) => Reply.ok(petJson(pet), etag(pet))
    ),
  deletePet: ({ headers, params }) =>
    Effect.as(pets.delete(params.petId, preconditionOf(headers["if-match"])), Reply.noContent)
  } satisfies Pick<Handlers<never>, "listPets" | "listTags" | "createPet" | "getPet" | "updatePet" | "deletePet">
})
