/**
 * The handlers record is keyed by the Api's operation ids, so an operation added to the
 * Api without a handler (or a handler left out) fails the typecheck (`npx tsc --noEmit`).
 */
import { describe, expectTypeOf, it } from "vitest"
import type { Handlers, OperationId } from "../../../src/adapters/http/server/routing/ApiRouter.ts"

describe("ApiRouter.Handlers", () => {
  it("has exactly one key per operation of the Api", () => {
    expectTypeOf<OperationId>().toEqualTypeOf<
      | "listPets"
      | "listTags"
      | "createPet"
      | "getPet"
      | "updatePet"
      | "deletePet"
      | "listOrders"
      | "placeOrder"
      | "getOrder"
      | "approveOrder"
      | "deliverOrder"
      | "cancelOrder"
      | "getInventory"
      | "createWebhook"
      | "listWebhooks"
      | "getWebhook"
      | "updateWebhook"
      | "deleteWebhook"
      | "rotateWebhookSecret"
      | "pingWebhook"
      | "listWebhookDeliveries"
      | "listEvents"
      | "uploadPetPhoto"
      | "listPetPhotos"
      | "deletePetPhoto"
      | "getPetPhotoRendition"
    >()
    expectTypeOf<keyof Handlers<never>>().toEqualTypeOf<OperationId>()
  })

  it("requires every handler", () => {
    // @ts-expect-error getInventory is missing
    const incomplete: Pick<Handlers<never>, OperationId> = {} as Omit<Handlers<never>, "getInventory">
    expectTypeOf(incomplete).not.toBeAny()
  })
})
