/**
 * The SQL store for PostgreSQL (and PGlite): PetRepositorySql, OrderRepositorySql,
 * IdempotentCreatesSql and ApiKeyStoreSql over one schema, with its migrations. Provide
 * them from one sql-pg client (PostgresClient against a server), built together they run
 * the migrations once (Migrations); Migrations.watch tells when the database was replaced.
 */
export * as IdempotentCreatesSql from "./IdempotentCreatesSql.ts"
export * as OrderRepositorySql from "./OrderRepositorySql.ts"
export * as Migrations from "./Migrations.ts"
export * as PetMigrations from "./PetMigrations.ts"
export * as ApiKeyStoreSql from "./keys/ApiKeyStoreSql.ts"
export * as PetRepositorySql from "./PetRepositorySql.ts"
export * as PostgresClient from "./PostgresClient.ts"
