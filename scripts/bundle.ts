/**
 * The service as `npm start` runs it: `src/main.ts` and the database thread's module
 * bundled by rolldown; and, in `tools/` beside it, the migrate, keys and webhooks
 * commands (`build/migrate.js` …), for a tree without `src/` such as the image. Node loads the service's 390 modules one by one, resolving each
 * through the file system (about half a second on the benchmark machine); a bundle of a
 * few chunks starts in about half the time and holds 30–45 MB less at idle. Modules
 * imported on demand (a store's driver, PGlite's thread, the docs page) stay chunks of
 * their own, loaded only when used.
 *
 * Each build goes to `build/<hash of its inputs>/`, and `build/main.js` imports the
 * newest one: a service already running keeps the chunks it may still load. Inputs are
 * `src/`, the lockfile and this file; a build whose inputs are unchanged is reused.
 *
 * `node scripts/bundle.ts` builds when needed and prints the entry's path, on stderr:
 * as `npm start`'s prestart, its stdout is the service's log stream.
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

const filesUnder = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((dirent) => dirent.isFile())
    .map((dirent) => Path.join(dirent.parentPath, dirent.name))

const inputsHash = (): string => {
  const hash = createHash("sha256")
  const inputs = [...filesUnder(Path.join(root, "src")), Path.join(root, "package-lock.json"), fileURLToPath(import.meta.url)]
  for (const file of inputs.sort()) {
    hash.update(Path.relative(root, file)).update("\0").update(Fs.readFileSync(file)).update("\0")
  }
  return hash.digest("hex").slice(0, 16)
}

/** The commands besides the service, built on their own so the service's chunks stay as they are. */
export const tools = {
  migrate: "src/programs/MigrateProgram.ts",
  keys: "src/programs/KeysProgram.ts",
  webhooks: "src/programs/WebhooksProgram.ts"
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
    // PGlite finds its WebAssembly and data files next to its own modules; pg-native is
    // an optional addon of pg that is not installed.
    external: ["@electric-sql/pglite", "pg-native"],
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

/** Builds the bundle unless one of the same inputs exists, points `build/main.js` at it, and returns that path. */
export const bundleService = async (): Promise<string> => {
  const hash = inputsHash()
  const dir = Path.join(buildDir, hash)
  if (!Fs.existsSync(dir)) {
    // Built aside and renamed into place, so a build cut short is never taken for a complete one.
    const scratch = Path.join(buildDir, `${hash}.partial-${process.pid}`)
    Fs.rmSync(scratch, { recursive: true, force: true })
    await bundleInto(scratch, { main: "src/main.ts" })
    // The commands (npm run migrate, keys, webhooks), for a tree without src/, such as the image.
    await bundleInto(Path.join(scratch, "tools"), tools)
    try {
      Fs.renameSync(scratch, dir)
    } catch (error) {
      // Another process has just put the same build in place.
      if (!Fs.existsSync(dir)) throw error
      Fs.rmSync(scratch, { recursive: true, force: true })
    }
  }
  const point = (file: string, target: string) => {
    const pointer = `${file}.${process.pid}`
    Fs.writeFileSync(pointer, `// The newest build of scripts/bundle.ts.\nimport "./${hash}/${target}"\n`)
    Fs.renameSync(pointer, file)
  }
  for (const name of Object.keys(tools)) point(Path.join(buildDir, `${name}.js`), `tools/${name}.js`)
  point(entry, "main.js")
  const now = Date.now()
  Fs.utimesSync(dir, now / 1000, now / 1000)
  const older = Fs.readdirSync(buildDir, { withFileTypes: true })
    .filter((dirent) => dirent.isDirectory() && /^[0-9a-f]{16}$/.test(dirent.name) && dirent.name !== hash)
    .map((dirent) => ({ path: Path.join(buildDir, dirent.name), at: Fs.statSync(Path.join(buildDir, dirent.name)).mtimeMs }))
    .sort((a, b) => b.at - a.at)
  for (const build of older.slice(keptBuilds)) Fs.rmSync(build.path, { recursive: true, force: true })
  return entry
}

if (import.meta.main) {
  console.error(await bundleService())
}
