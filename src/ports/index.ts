export * from "./ApiKeys.ts"
export * from "./PetRepository.ts"
export * from "./OrderRepository.ts"
export * from "./IdempotentCreates.ts"
