/** The HTTP contract: the HttpApi definition, wire schemas and error bodies. No server code. */
export * from "./Api.ts"
export * from "./ApiErrors.ts"
export * from "./Authorization.ts"
export * from "./JsonContentType.ts"
export * from "./PetsApi.ts"
export * from "./RequestValidation.ts"
export * from "./Sunset.ts"
export * from "./StoreApi.ts"
