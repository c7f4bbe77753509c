/**
 * The SQL store for PostgreSQL (and PGlite): PetRepositorySql, OrderRepositorySql,
 * IdempotentCreatesSql and ApiKeyStoreSql over one schema, with its migrations. Provide
 * them from one sql-pg client (PostgresClient against a server).
 */
export * as IdempotentCreatesSql from "./IdempotentCreatesSql.ts"
export * as OrderRepositorySql from "./OrderRepositorySql.ts"
export * as PetMigrations from "./PetMigrations.ts"
export * as ApiKeyStoreSql from "./keys/ApiKeyStoreSql.ts"
export * as PetRepositorySql from "./PetRepositorySql.ts"
export * as PostgresClient from "./PostgresClient.ts"
