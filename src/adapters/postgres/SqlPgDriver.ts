/**
 * `@effect/sql-pg`, the driver of the SQL adapters (a PostgreSQL server and embedded
 * PGlite alike): an optional peer dependency, so that an embedder who uses only the
 * domain and the memory store does not install it. Loaded here, once, for every module
 * that needs it at run time (the others import its types only): without it, importing
 * `animal-store/postgres` or `animal-store/embedded` fails with a message naming the
 * package to install, not with a resolution error from deep inside.
 */
import type * as SqlPgModule from "@effect/sql-pg"
import { missingPeer } from "../process/MissingPeer.ts"

/** The error of an entry point whose optional peer dependency is not installed. */
export { missingPeer }

const isNotFound = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === "ERR_MODULE_NOT_FOUND"

export const SqlPg: typeof SqlPgModule = await import("@effect/sql-pg").catch((error: unknown) => {
  throw isNotFound(error) ? missingPeer("animal-store/postgres, animal-store/embedded", "@effect/sql-pg", error) : error
})
