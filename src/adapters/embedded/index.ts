/** The embedded PostgreSQL (PGlite in a directory) as a sql-pg client for PetRepositorySql. */
// First: without PGlite, the import fails here, naming it.
import "./PglitePeer.ts"
export * as EmbeddedDatabase from "./EmbeddedDatabase.ts"
/** Opening its directory early, before Effect is loaded, for EmbeddedDatabase.layer to adopt. */
export * as EmbeddedOpening from "./EmbeddedOpening.ts"
