export * from "./ApiKeys.ts"
export * from "./PetRepository.ts"
