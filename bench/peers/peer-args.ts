/**
 * The peers' command line, one JSON argument:
 * '{"port":1234,"apiKeys":["k"],"store":"map"}' (stores "pg" and "sqlpg" need "databaseUrl";
 * "sqlpg", on @effect/sql-pg, is the Effect floor's only: effect-store.ts; the Fastify
 * peer also reads "features" and "off"), and the PetStore it names.
 */
import { makeMapStore } from "./map-store.ts"
import type { PetStore } from "./pet-store.ts"
import { makePgStore } from "./pg-store.ts"

/** A feature the Fastify peer can leave out alone, as Animal Store can (LOG_LEVEL=none, RATE_LIMIT=off, METRICS=off). */
export type PeerFeature = "log" | "rateLimit" | "metrics"

export interface PeerArgs {
  readonly port: number
  readonly apiKeys: ReadonlyArray<string>
  readonly store: "map" | "pg" | "sqlpg"
  readonly databaseUrl?: string
  /** Fastify only: Animal Store's features on (request log, request id, rate limit, metrics, headers). */
  readonly features?: boolean
  /** Fastify only, with `features`: these left out, each as a Fastify service switches it off. */
  readonly off?: ReadonlyArray<PeerFeature>
}

export const peerArgs = (): PeerArgs => JSON.parse(process.argv[2] ?? "{}") as PeerArgs

/** The Promise store: the Map or node-postgres ("sqlpg" is an Effect store: effect-store.ts). */
export const openStore = (args: PeerArgs): Promise<PetStore> =>
  args.store === "sqlpg"
    ? Promise.reject(new Error(`store "sqlpg" is the Effect floor's only`))
    : args.store === "pg"
    ? makePgStore(args.databaseUrl ?? "")
    : Promise.resolve(makeMapStore())
