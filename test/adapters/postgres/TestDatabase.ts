import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { connect } from "node:net"
import * as PostgresClient from "../../../src/adapters/postgres/PostgresClient.ts"

/** Server the PostgreSQL runs use: TEST_DATABASE_URL, else the conventional local server. */
export const serverUrl = process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

const reachable = (url: string): Promise<boolean> => {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 5432), timeout: 2000 })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.once("connect", () => done(true))
    socket.once("timeout", () => done(false))
    socket.once("error", () => done(false))
  })
}

/**
 * Whether the PostgreSQL runs happen. On CI they are mandatory, so an unreachable
 * server fails the run instead of skipping it.
 */
export const postgresAvailable: boolean = await (async () => {
  const ok = await reachable(serverUrl)
  if (ok) return true
  if (process.env["CI"] === "true") {
    throw new Error(`CI=true but no PostgreSQL server answers at ${new URL(serverUrl).host}`)
  }
  console.warn(
    `\n  SKIPPED: the PostgreSQL runs, because no server answers at ${new URL(serverUrl).host}.\n` +
      `  To run them, start PostgreSQL or set TEST_DATABASE_URL=postgres://user@host:port/db (a role that may CREATE DATABASE).\n`
  )
  return false
})()

const withDatabase = (url: string, database: string): Redacted.Redacted => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}

/** The URL of a brand-new database, dropped again when the scope closes. */
export const freshDatabaseUrl = Effect.gen(function*() {
  const database = `animal_store_test_${process.pid}_${Date.now().toString(36)}_${
    Math.random().toString(36).slice(2, 8)
  }`
  const admin = PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 })
  yield* Effect.acquireRelease(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE DATABASE ${sql(database)}`).pipe(Effect.provide(admin)),
    () =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP DATABASE IF EXISTS ${sql(database)} WITH (FORCE)`).pipe(
        Effect.provide(admin),
        Effect.orDie
      )
  )
  return withDatabase(serverUrl, database)
})

/**
 * A PgClient on a brand-new database, dropped again when the layer is released,
 * configured as the service configures it (PostgresClient).
 */
export const layerFreshDatabase = (options?: { readonly maxConnections?: number }) =>
  Layer.unwrap(Effect.map(freshDatabaseUrl, (url) =>
    PostgresClient.layer({
      url,
      poolSize: options?.maxConnections ?? 10,
      statementTimeout: Duration.seconds(10)
    })))
