/** The embedded PostgreSQL (PGlite in a directory) as a sql-pg client for PetRepositorySql. */
export * as EmbeddedDatabase from "./EmbeddedDatabase.ts"
/** Opening its directory early, before Effect is loaded, for EmbeddedDatabase.layer to adopt. */
export * as EmbeddedOpening from "./EmbeddedOpening.ts"
