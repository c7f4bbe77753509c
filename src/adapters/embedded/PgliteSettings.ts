/**
 * How the database thread runs PGlite, chosen for memory and start-up time:
 * with the defaults the embedded service peaked near 1 GB, and PGlite took
 * 0.7-0.9 s to open an existing directory (0.2 s with these).
 */
import { PGlite, type PGliteOptions } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"

/**
 * V8 flags for PGlite's WebAssembly: baseline code (Liftoff) only. V8's
 * optimising tier took 600 MB for a moment to compile PostgreSQL's parser
 * alone (`raw_parser`, 100 KB of WebAssembly), and its compile work cost more
 * CPU than it saved over the first tens of thousands of statements; the
 * database thread is mostly idle under HTTP load anyway. The flags are
 * process-wide: they also apply to WebAssembly compiled later elsewhere in
 * the process.
 */
export const v8Flags = "--no-wasm-dynamic-tiering --no-wasm-tier-up"

/**
 * PostgreSQL settings on top of PGlite's own, passed at every start (they win
 * over the postgresql.conf initdb wrote). PGlite keeps PostgreSQL's shared
 * memory in its WebAssembly memory, which never shrinks, and zeroes all of it
 * at each start (0.5 s for the default 128 MB of shared buffers):
 *
 * - shared_buffers=16MB holds the service's working set, the pets table and
 *   its indexes (about 2 MB for 10,000 pets); a larger table is read from the
 *   OS page cache.
 * - PGlite is one backend in single-user mode: no other connections, no
 *   autovacuum workers, no WAL senders or replication slots to size shared
 *   memory (and its lock tables) for.
 * - maintenance_work_mem=16MB bounds what an index build in a migration may
 *   take (default 64 MB).
 */
export const pgliteOptions: PGliteOptions = {
  startParams: [
    ...PGlite.defaultStartParams,
    ...[
      "shared_buffers=16MB",
      "max_connections=1",
      "superuser_reserved_connections=0",
      "autovacuum_worker_slots=1",
      "max_wal_senders=0",
      "max_replication_slots=0",
      "maintenance_work_mem=16MB"
    ].flatMap((setting) => ["-c", setting])
  ],
  // pg_trgm's trigram index serves name search (migration 0020 creates the extension).
  extensions: { pg_trgm }
}
