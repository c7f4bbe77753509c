/**
 * The SQL store for PostgreSQL (and PGlite): PetRepositorySql and OrderRepositorySql over
 * one schema, with its migrations. Provide both from one SqlClient.
 */
export * as OrderRepositorySql from "./OrderRepositorySql.ts"
export * as PetMigrations from "./PetMigrations.ts"
export * as PetRepositorySql from "./PetRepositorySql.ts"
export * as IdempotentCreatesSql from "./IdempotentCreatesSql.ts"
