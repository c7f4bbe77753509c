/**
 * Throwaway PostgreSQL databases for the real-process tests, made and dropped
 * through @effect/sql-pg (no psql needed), on the server TestDatabase.ts finds.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { serverUrl } from "../adapters/postgres/TestDatabase.ts"

export { postgresAvailable, serverUrl } from "../adapters/postgres/TestDatabase.ts"

/** `serverUrl` with another database name (and optionally another host/port/password). */
export const databaseUrl = (
  database: string,
  override: { readonly host?: string; readonly port?: number; readonly password?: string } = {}
): string => {
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  if (override.host !== undefined) url.hostname = override.host
  if (override.port !== undefined) url.port = String(override.port)
  if (override.password !== undefined) url.password = override.password
  return url.toString()
}

const withClient = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, f).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
    )
  )

const created = new Set<string>()

/** Creates a brand-new, empty database and returns its name. */
export const createDatabase = async (): Promise<string> => {
  const name = `animal_store_main_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await withClient(serverUrl, (sql) => sql`CREATE DATABASE ${sql(name)}`)
  created.add(name)
  return name
}

/** Drops a database made by {@link createDatabase}, disconnecting whoever still uses it. */
export const dropDatabase = async (name: string): Promise<void> => {
  await withClient(serverUrl, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
  created.delete(name)
}

/**
 * Drops a database made by {@link createDatabase} and creates it again, empty, under the
 * same name: a database replaced under whoever uses it (its connections are cut).
 */
export const recreateDatabase = async (name: string): Promise<void> => {
  await withClient(serverUrl, (sql) =>
    Effect.andThen(sql`DROP DATABASE ${sql(name)} WITH (FORCE)`, sql`CREATE DATABASE ${sql(name)}`))
}

export const dropAllDatabases = async (): Promise<void> => {
  for (const name of [...created]) await dropDatabase(name)
}

/** Runs one query on a database directly (not through the service). */
export const query = <Row extends object>(database: string, text: string): Promise<ReadonlyArray<Row>> =>
  withClient(databaseUrl(database), (sql) => sql.unsafe<Row>(text))
