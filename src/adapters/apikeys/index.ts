/**
 * ApiKeys adapters: a fixed set of keys (ApiKeysStatic), and managed keys from an
 * ApiKeyStore verified from memory (ApiKeysCached); key management (ApiKeyAdminLocal).
 */
export * as ApiKeyAdminLocal from "../../application/keys/ApiKeyAdminLocal.ts"
export * as ApiKeysCached from "./ApiKeysCached.ts"
export * as ApiKeysStatic from "./ApiKeysStatic.ts"
