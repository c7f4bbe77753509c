#!/usr/bin/env node
/**
 * The `animal-store` command, the package's one bin and what `npm start`, `npm run keys`,
 * `webhooks` and `migrate` run (bundled): `animal-store serve` runs the service,
 * `migrate`, `keys` and `webhooks` the commands. With the programs beside its wiring in
 * programs/, the composition root: the only place that chooses adapters (the store's in
 * StoreWiring, the service's own in ServiceWiring).
 *
 * A bare `animal-store serve` begins opening the embedded store before anything else is
 * loaded, then loads the service (ServiceProgram) without the command-line parser: ESM
 * loads a module's whole static graph before it runs any of it, and loading the service
 * takes about as long as opening PGlite on its thread, so begun first the two overlap.
 * Anything else is parsed by the command line (CommandLine, effect/cli), `serve --help`
 * included. Each is imported dynamically, so neither loads the other's modules.
 *
 * Effect's schema compiler is installed first, before any schema is built: each decoder
 * and constructor is then compiled to plain functions on first use, and a value that
 * passes is decoded with no fiber (a failure is explained by the interpreter, with the
 * same issue). Decoding a 20-row page of pets fell from 13–24 µs to 5.3–13 µs.
 */
import "effect/schema/SchemaJITCompiler/enable"
import "./programs/EnvFile.ts"
import * as EmbeddedOpening from "./adapters/embedded/EmbeddedOpening.ts"
import * as MissingPeer from "./adapters/process/MissingPeer.ts"
import * as StoreDefaults from "./programs/StoreDefaults.ts"

const args = process.argv.slice(2)

// A program whose modules cannot be loaded for want of an optional peer (the command line
// and the service need @effect/platform-node) says which, in one line, and exits 1.
const orMissingPeer = (opening: EmbeddedOpening.Opening | undefined) => async (error: unknown): Promise<void> => {
  await opening?.release()
  const peer = MissingPeer.missingPeerIn(error)
  if (peer === undefined) throw error
  process.stderr.write(`animal-store: ${MissingPeer.hint(peer)}\n`)
  process.exitCode = 1
}

if (args.length === 1 && args[0] === "serve") {
  // The store StoreConfig picks, guessed from the same variables and defaults before Effect
  // is loaded. A wrong guess costs only time: an opening the configuration does not use is released.
  const env = process.env
  const opening = (env["STORE"] ?? StoreDefaults.storeKindWhenUnset(env["DATABASE_URL"] !== undefined)) === "embedded"
    ? EmbeddedOpening.begin(env["DATA_DIR"] ?? StoreDefaults.DATA_DIR)
    : undefined
  await import("./programs/ServiceProgram.ts").then((ServiceProgram) => ServiceProgram.run(opening), orMissingPeer(opening))
} else {
  await import("./programs/CommandLine.ts").then((CommandLine) => CommandLine.run(), orMissingPeer(undefined))
}
