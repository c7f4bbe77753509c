import { Clock, Effect, Schema } from "effect"
import { HttpApiBuilder, HttpApiSchema } from "effect/http-api"
import { Gone } from "../../../domain/Errors.ts"
import { NewPet } from "../../../domain/NewPet.ts"
import { PAGE_LIMIT_DEFAULT } from "../../../domain/PetQuery.ts"
import { PetRepository } from "../../../ports/PetRepository.ts"
import { Api } from "../api/Api.ts"
import { CursorParam } from "../api/PathAndQuery.ts"
import { SUNSET } from "../api/Sunset.ts"
import { toHttpError } from "./HttpErrors.ts"
import { keysetPage } from "./KeysetPage.ts"

const encodeCursor = Schema.encodeSync(CursorParam)

/** The `animals` operations, on whichever PetRepository is provided. */
export const layer = HttpApiBuilder.group(
  Api,
  "animals",
  Effect.fn(function*(handlers) {
    const pets = yield* PetRepository

    return handlers.handleAll({
      listPets: ({ query }) =>
        Effect.gen(function*() {
          const limit = query.limit ?? PAGE_LIMIT_DEFAULT
          const rows = yield* pets.list({ limit: limit + 1, status: query.status, after: query.cursor })
          return keysetPage(rows, { limit, path: "/v1/pets", filters: [["status", query.status]], cursorOf: encodeCursor })
        }).pipe(Effect.mapError(toHttpError)),

      createPet: ({ payload }) =>
        pets.create(new NewPet(payload, { disableChecks: true })).pipe(
          Effect.map((pet) => HttpApiSchema.withHeaders({ body: pet, headers: { location: `/v1/pets/${pet.id}` } })),
          Effect.mapError(toHttpError)
        ),

      getPet: ({ params }) =>
        Effect.gen(function*() {
          if ((yield* Clock.currentTimeMillis) >= SUNSET.epochMillis) {
            return yield* new Gone({
              message: `GET /v1/pets/{petId} was removed on ${SUNSET.httpDate}; use GET /v1/pets`
            })
          }
          return yield* pets.get(params.petId)
        }).pipe(Effect.mapError(toHttpError))
    })
  })
)
