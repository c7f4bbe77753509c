/**
 * Where the embedded store puts the key it issues for itself when it starts with none: a
 * file in its data directory readable by the directory's owner only, so that the key never
 * passes through the process's output, which log shippers collect.
 */
import { Effect, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** Name of the file, inside the data directory, that holds the bootstrap key. */
export const BOOTSTRAP_KEY_FILE_NAME = "bootstrap-key"

/** Writes `key` to a new file in `dataDir`, mode 0600; succeeds with its path. */
export const write = (dataDir: string, key: Redacted.Redacted<string>): Effect.Effect<string> =>
  Effect.sync(() => {
    const file = Path.join(Path.resolve(dataDir), BOOTSTRAP_KEY_FILE_NAME)
    // One left by an earlier bootstrap goes. The key is written only into a file created
    // here (wx), never through one that exists, such as a symlink planted in its place.
    Fs.rmSync(file, { force: true })
    Fs.writeFileSync(file, `${Redacted.value(key)}\n`, { flag: "wx", mode: 0o600 })
    return file
  })
