/** A typed client for the Animal Store HTTP API. */
export * from "./AnimalStoreClient.ts"
