/** The embedded PostgreSQL (PGlite in a directory) as a sql-pg client for PetRepositorySql. */
export * as EmbeddedDatabase from "./EmbeddedDatabase.ts"
