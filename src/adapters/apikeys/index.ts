/** ApiKeys adapters: a fixed set of keys compared in constant time. */
export * as ApiKeysStatic from "./ApiKeysStatic.ts"
