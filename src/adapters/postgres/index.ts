/** The SQL PetRepository for PostgreSQL (and PGlite), with its migrations. */
export * as PetMigrations from "./PetMigrations.ts"
export * as PetRepositorySql from "./PetRepositorySql.ts"
