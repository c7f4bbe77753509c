/** In-process adapters: a PetRepository in memory, for tests and embedding. */
export * as PetRepositoryMemory from "./PetRepositoryMemory.ts"
