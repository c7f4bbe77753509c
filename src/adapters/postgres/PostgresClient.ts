/**
 * The sql-pg client the SQL store runs on against a PostgreSQL server, configured as the
 * store expects: the service, the key command and the adapter tests all build it here.
 */
import { Duration, type Redacted } from "effect"
import { SqlPg } from "./SqlPgDriver.ts"

export interface Options {
  readonly url: Redacted.Redacted
  /** Connections for statements and transactions. */
  readonly poolSize: number
  readonly connectTimeout?: Duration.Duration | undefined
  /** The server's `statement_timeout`: the same bound the adapters wait for a statement. */
  readonly statementTimeout: Duration.Duration
}

export const layer = (options: Options) =>
  SqlPg.PgClient.layer({
    url: options.url,
    maxConnections: options.poolSize,
    // Not multiplexed, though page and id queries answered up to 1.4x as many requests per
    // second with it (interleaved runs on this shared machine): sql-pg does not cancel an
    // abandoned statement on a shared connection, so a create answered 503 (the database
    // did not answer in time) was stored once the network came back (test/e2e/outage).
    // Making the insert a transaction prevented that and cost creates a third of their
    // throughput.
    multiplex: false,
    ...(options.connectTimeout === undefined ? {} : { connectTimeout: options.connectTimeout }),
    startupParameters: { statement_timeout: String(Duration.toMillis(options.statementTimeout)) }
  })
