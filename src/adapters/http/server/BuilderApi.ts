import { HttpApi, HttpApiGroup } from "effect/http-api"
import { StoreGroup } from "../api/StoreApi.ts"

const { approveOrder, cancelOrder, deliverOrder, getInventory, placeOrder } = StoreGroup.endpoints

/**
 * The part of the Api that HttpApiBuilder serves: every operation FastRoutes does not.
 * The router refuses a method and path twice, so the fast operations must not be built
 * here too. The endpoints keep their middleware (authorization, validation, JSON
 * content type); the OpenAPI document, the docs and the client use the whole Api.
 */
export class BuilderApi extends HttpApi.make("animal-store")
  .add(HttpApiGroup.make("store").add(placeOrder, approveOrder, deliverOrder, cancelOrder, getInventory))
  .prefix("/v1")
{}
