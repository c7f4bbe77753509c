/**
 * The SQL store for PostgreSQL (and PGlite): PetRepositorySql, OrderRepositorySql and
 * IdempotentCreatesSql over one schema, with its migrations. Provide all three from one
 * SqlClient.
 */
export * as IdempotentCreatesSql from "./IdempotentCreatesSql.ts"
export * as OrderRepositorySql from "./OrderRepositorySql.ts"
export * as PetMigrations from "./PetMigrations.ts"
export * as PetRepositorySql from "./PetRepositorySql.ts"
