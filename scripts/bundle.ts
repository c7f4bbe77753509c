/**
 * `animal-store` as `npm start` and `npm run keys`, `webhooks` and `migrate` run it:
 * `src/main.ts` (the service and the commands) and the database thread's module bundled
 * by rolldown, so that a tree without `src/`, such as the image, runs them too. Node
 * loads the service's 390 modules one by one, resolving each through the file system
 * (about half a second on the benchmark machine, about 1.3 s of CPU for a command); a
 * bundle of a few chunks starts in about half the time and holds 30–45 MB less at idle.
 * Modules imported on demand (the service or the command line, a store's driver,
 * PGlite's thread, the docs page) stay chunks of their own, loaded only when used.
 *
 * Each build goes to `build/<hash of its inputs>/`, and `build/main.js` imports the
 * newest one: a service already running keeps the chunks it may still load. Inputs are
 * `src/`, the lockfile and this file; a build whose inputs are unchanged is reused. That
 * is judged first by the inputs' names, sizes and modification times, as the last run
 * recorded them (`build/inputs.json`: a few milliseconds), and only when those differ by
 * their contents.
 *
 * `node scripts/bundle.ts` builds when needed and prints the entry's path, on stderr:
 * as `npm start`'s prestart, its stdout is the service's log stream. With `--quiet` (the
 * commands' pre-scripts) it says something only when it builds.
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../", import.meta.url))
const buildDir = Path.join(root, "build")

/** What `npm start` runs. */
export const entry = Path.join(buildDir, "main.js")

/** In each build: the source modules (paths from the repository's root) in each chunk. */
export const manifestName = "modules.json"

/** Builds kept besides the newest, for services started from them that are still running. */
const keptBuilds = 2

/** The last run's inputs, as their names, sizes and modification times, and the build they made. */
const stampFile = Path.join(buildDir, "inputs.json")

const filesUnder = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((dirent) => dirent.isFile())
    .map((dirent) => Path.join(dirent.parentPath, dirent.name))

const inputFiles = (): Array<string> =>
  [...filesUnder(Path.join(root, "src")), Path.join(root, "package-lock.json"), fileURLToPath(import.meta.url)].sort()

const digest = (update: (hash: ReturnType<typeof createHash>) => void): string => {
  const hash = createHash("sha256")
  update(hash)
  return hash.digest("hex").slice(0, 16)
}

/** The inputs as the file system describes them: cheap, and changed by any edit. */
const inputsSignature = (files: ReadonlyArray<string>): string =>
  digest((hash) => {
    for (const file of files) {
      const { mtimeMs, size } = Fs.statSync(file)
      hash.update(`${Path.relative(root, file)}\0${size}\0${mtimeMs}\0`)
    }
  })

/** The inputs' contents: the name of their build. */
const inputsHash = (files: ReadonlyArray<string>): string =>
  digest((hash) => {
    for (const file of files) hash.update(Path.relative(root, file)).update("\0").update(Fs.readFileSync(file)).update("\0")
  })

const readStamp = (): { readonly signature: string; readonly hash: string } | undefined => {
  try {
    return JSON.parse(Fs.readFileSync(stampFile, "utf8"))
  } catch {
    return undefined
  }
}

/** What `build/main.js` holds when it points at the build `hash`. */
const pointerText = (hash: string) => `// The newest build of scripts/bundle.ts.\nimport "./${hash}/main.js"\n`

/** Writes `file` whole, then renames it into place: a reader never sees half of it. */
const writeWhole = (file: string, text: string) => {
  const partial = `${file}.${process.pid}`
  Fs.writeFileSync(partial, text)
  Fs.renameSync(partial, file)
}

const bundleInto = async (dir: string, entries: Readonly<Record<string, string>>): Promise<void> => {
  const { build } = await import("rolldown")
  const output = await build({
    input: {
      ...Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, Path.join(root, path)])),
      // Started by PgliteThread as `./PgliteWorker.js` next to the chunk that holds it.
      PgliteWorker: Path.join(root, "src/adapters/embedded/PgliteWorker.ts")
    },
    platform: "node",
    // PGlite finds its WebAssembly and data files next to its own modules, its
    // extensions' (`@electric-sql/pglite/contrib/pg_trgm`) included; pg-native is an
    // optional addon of pg that is not installed; sharp loads its native libvips binding
    // (@img/sharp-<platform>) from its own install.
    external: [/^@electric-sql\/pglite(\/|$)/, "pg-native", "sharp"],
    logLevel: "warn",
    output: {
      dir,
      format: "esm",
      entryFileNames: "[name].js",
      chunkFileNames: "[name]-[hash].js",
      // Readable stack traces with `node --enable-source-maps`.
      sourcemap: true,
      // Node keeps every loaded module's source for as long as the process runs, and
      // `effect`'s is mostly documentation: without it 3.9 MB instead of 11.4 MB (two
      // bytes a character, for the odd non-ASCII one in a comment), 8 MB less at idle.
      comments: { legal: true, annotation: false, jsdoc: false }
    }
  })
  // Which source modules each chunk holds: what a test of loaded chunks reads them as.
  const modules = Object.fromEntries(
    output.output.flatMap((file) =>
      file.type === "chunk" ? [[file.fileName, file.moduleIds.map((id) => Path.relative(root, id))]] : []
    )
  )
  Fs.writeFileSync(Path.join(dir, manifestName), `${JSON.stringify(modules, null, 2)}\n`)
  // Found by PgdataTemplate next to the chunk that holds it.
  for (const file of Fs.readdirSync(Path.join(root, "src/adapters/embedded"))) {
    if (file.startsWith("pgdata-") && file.endsWith(".tar.br")) {
      Fs.copyFileSync(Path.join(root, "src/adapters/embedded", file), Path.join(dir, file))
    }
  }
}

/**
 * Builds the bundle unless one of the same inputs exists, points `build/main.js` at it,
 * and returns that path. `onBuild` is told when a build begins.
 */
export const bundleService = async (onBuild: () => void = () => undefined): Promise<string> => {
  const files = inputFiles()
  const signature = inputsSignature(files)
  const stamp = readStamp()
  // Nothing changed since the last run: its build, if it is still the one pointed at.
  if (stamp?.signature === signature && Fs.existsSync(Path.join(buildDir, stamp.hash))) {
    try {
      if (Fs.readFileSync(entry, "utf8") === pointerText(stamp.hash)) return entry
    } catch {
      // No pointer: made below.
    }
  }
  const hash = inputsHash(files)
  const dir = Path.join(buildDir, hash)
  if (!Fs.existsSync(dir)) {
    onBuild()
    // Built aside and renamed into place, so a build cut short is never taken for a complete one.
    const scratch = Path.join(buildDir, `${hash}.partial-${process.pid}`)
    Fs.rmSync(scratch, { recursive: true, force: true })
    await bundleInto(scratch, { main: "src/main.ts" })
    try {
      Fs.renameSync(scratch, dir)
    } catch (error) {
      // Another process has just put the same build in place.
      if (!Fs.existsSync(dir)) throw error
      Fs.rmSync(scratch, { recursive: true, force: true })
    }
  }
  writeWhole(entry, pointerText(hash))
  // The commands' own entries of earlier builds: `build/main.js <command>` runs them now.
  for (const name of ["migrate", "keys", "webhooks"]) Fs.rmSync(Path.join(buildDir, `${name}.js`), { force: true })
  const now = Date.now()
  Fs.utimesSync(dir, now / 1000, now / 1000)
  const older = Fs.readdirSync(buildDir, { withFileTypes: true })
    .filter((dirent) => dirent.isDirectory() && /^[0-9a-f]{16}$/.test(dirent.name) && dirent.name !== hash)
    .map((dirent) => ({ path: Path.join(buildDir, dirent.name), at: Fs.statSync(Path.join(buildDir, dirent.name)).mtimeMs }))
    .sort((a, b) => b.at - a.at)
  for (const build of older.slice(keptBuilds)) Fs.rmSync(build.path, { recursive: true, force: true })
  writeWhole(stampFile, `${JSON.stringify({ signature, hash })}\n`)
  return entry
}

if (import.meta.main) {
  const quiet = process.argv.includes("--quiet")
  const started = Date.now()
  let built = false
  const path = await bundleService(() => {
    built = true
    if (quiet) process.stderr.write("Bundling src/ into build/ (it has changed)…\n")
  })
  if (!quiet) console.error(path)
  else if (built) console.error(`Bundled in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}
