/**
 * The SQL store for PostgreSQL (and PGlite): PetRepositorySql, OrderRepositorySql, EventLogSql,
 * IdempotentCreatesSql and ApiKeyStoreSql over one schema, with its migrations. Provide
 * them from one sql-pg client (PostgresClient against a server), built together they run
 * the migrations once (Migrations); Migrations.watch tells when the database was replaced.
 */
export * as IdempotentCreatesSql from "./idempotency/IdempotentCreatesSql.ts"
export * as OrderRepositorySql from "./orders/OrderRepositorySql.ts"
export * as Migrations from "./Migrations.ts"
export * as SchemaMigrations from "./SchemaMigrations.ts"
export * as ApiKeyStoreSql from "./keys/ApiKeyStoreSql.ts"
export * as PetRepositorySql from "./pets/PetRepositorySql.ts"
export * as PostgresClient from "./PostgresClient.ts"
export * as EventLogSql from "./events/EventLogSql.ts"
