/**
 * The store's defaults, as plain values: StoreConfig reads the environment with them,
 * and main.ts guesses the store from them before Effect is loaded (it imports nothing).
 */

/** Which adapters hold the pets, orders and keys. */
export const STORE_KINDS = ["memory", "embedded", "postgres"] as const
/** A value of {@link STORE_KINDS}. */
export type StoreKind = typeof STORE_KINDS[number]

/** Where the embedded store keeps its database when DATA_DIR is unset. */
export const DATA_DIR = "./data"

/** The store when STORE is unset: postgres when a database URL is given, the embedded database otherwise. */
export const storeKindWhenUnset = (databaseUrlSet: boolean): StoreKind => databaseUrlSet ? "postgres" : "embedded"
