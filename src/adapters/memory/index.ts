/**
 * In-process adapters, for tests and embedding: `StoreMemory.layer` provides
 * PetRepository, OrderRepository and IdempotentCreates over one store;
 * `PetRepositoryMemory.layer` the catalogue alone.
 */
export * as ApiKeyStoreMemory from "./keys/ApiKeyStoreMemory.ts"
export * as PetRepositoryMemory from "./pets/PetRepositoryMemory.ts"
export * as StoreMemory from "./StoreMemory.ts"
