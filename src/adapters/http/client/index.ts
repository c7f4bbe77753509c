/** A typed client for the Animal Store HTTP API. */
export * from "./AnimalStoreClient.ts"
// The errors the client's signatures name, so a consumer's declarations can name them from here.
export * from "../api/ApiErrors.ts"
