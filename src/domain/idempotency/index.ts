export * from "./IdempotencyErrors.ts"
export * from "./IdempotencyKey.ts"
export * from "./IdempotentRequest.ts"
export * from "./KeptAnswer.ts"
