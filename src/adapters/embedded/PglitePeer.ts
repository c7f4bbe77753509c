/**
 * `@electric-sql/pglite`, an optional peer dependency that only the embedded store needs:
 * checked when `animal-store/embedded` is imported, so that without it the import fails
 * with a message naming the package to install. (PGlite itself is loaded on the database
 * thread, by PgliteWorker, when a database is opened.)
 */
import { SqlPgDriver } from "../postgres/index.ts"

try {
  import.meta.resolve("@electric-sql/pglite")
} catch (error) {
  throw SqlPgDriver.missingPeer("animal-store/embedded", "@electric-sql/pglite", error)
}
