/**
 * A mode loads only what it uses (issue 8): the memory and PostgreSQL stores never load
 * PGlite, the memory store never loads the PostgreSQL driver, the AWS SDK is loaded only
 * for PHOTO_STORE=s3, and the docs page's 3 MB script is loaded when `/docs` is first
 * asked for, not before; no barrel of Effect's is loaded whole. Seen from the real process: every module it loads is appended to a file by
 * a preloaded hook (ModuleLog.ts).
 * The process runs the bundle, so a loaded chunk stands for the source modules its build's
 * manifest lists in it: the test also fails if bundling puts them in a chunk loaded early.
 */
import { existsSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { manifestName } from "../../scripts/bundle.ts"
import { createDatabase, databaseUrl, postgresAvailable } from "./PgAdmin.ts"
import { repoRoot, type ServiceProcess, startService, tempDir } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"
import * as S3Server from "../adapters/s3/S3Server.ts"

const API_KEY = "module-loading-test-key"
const HOOK = fileURLToPath(new URL("./ModuleLog.ts", import.meta.url))

const PGLITE = "/node_modules/@electric-sql/pglite/"
// sql-pg speaks the PostgreSQL protocol itself (no `pg` package under it).
const PG_DRIVER = "/node_modules/@effect/sql-pg/"
const DOCS_BUNDLE = "/node_modules/effect/dist/http-api/internal/httpApiScalar.js"
const AWS_SDK = "/node_modules/@aws-sdk/client-s3/"
// Effect's barrels: one loaded at run time brings every module it names (a dynamic import of
// `effect` alone loaded 500 KB the service never runs: Graph, Arbitrary, the Tx* family).
const BARRELS = ["effect/dist/index.js", "effect/dist/http/index.js", "effect/dist/persistence/index.js"]

cleanUpProcesses()

/** The files a module URL stands for: a chunk's source modules, or the module itself. */
const sourcesOf = (url: string): ReadonlyArray<string> => {
  if (!url.startsWith("file:")) return [url]
  const path = fileURLToPath(url)
  const manifest = Path.join(Path.dirname(path), manifestName)
  if (!existsSync(manifest)) return [path]
  const chunks: Record<string, ReadonlyArray<string>> = JSON.parse(readFileSync(manifest, "utf8"))
  return (chunks[Path.basename(path)] ?? [path]).map((module) => Path.join(repoRoot, module))
}

/** Starts the service with the hook and returns it with a reader of the modules loaded so far. */
const startLogged = async (env: Record<string, string>) => {
  const log = Path.join(tempDir("animal-store-modules-"), "modules.txt")
  const service = await startService({
    env: { ...env, API_KEYS: API_KEY, MODULE_LOG: log, NODE_OPTIONS: `--import=${HOOK}` }
  })
  const loaded = () => readFileSync(log, "utf8").split("\n").filter((url) => url !== "").flatMap(sourcesOf)
  return { service, loaded }
}

/** Serves the API (a list, a create) so that what a request needs is loaded too. */
const serveSome = async (service: ServiceProcess) => {
  expect((await service.request("POST", "/v1/pets", { apiKey: API_KEY, body: { name: "Rex", categoryId: 1 } })).status)
    .toBe(201)
  expect((await service.request("GET", "/v1/pets", { apiKey: API_KEY })).status).toBe(200)
}

const containing = (urls: ReadonlyArray<string>, part: string) => urls.filter((url) => url.includes(part))

describe("modules a mode loads", () => {
  it("memory store: neither PGlite nor the PostgreSQL driver, and the docs script only once /docs is asked for", async () => {
    const { loaded, service } = await startLogged({ STORE: "memory" })
    await serveSome(service)
    const beforeDocs = loaded()
    // The hook itself works: the service's own modules are in the log.
    expect(containing(beforeDocs, "/src/main.ts")).toHaveLength(1)
    expect(containing(beforeDocs, PGLITE)).toEqual([])
    expect(containing(beforeDocs, PG_DRIVER)).toEqual([])
    expect(containing(beforeDocs, DOCS_BUNDLE)).toEqual([])
    expect(containing(beforeDocs, AWS_SDK)).toEqual([])
    expect(BARRELS.flatMap((barrel) => containing(beforeDocs, `/node_modules/${barrel}`))).toEqual([])

    expect((await service.request("GET", "/docs")).status).toBe(200)
    expect(containing(loaded(), DOCS_BUNDLE)).toHaveLength(1)
  })

  it.skipIf(!postgresAvailable)("PostgreSQL store: the driver, and no PGlite", async () => {
    const database = await createDatabase()
    const { loaded, service } = await startLogged({ STORE: "postgres", DATABASE_URL: databaseUrl(database) })
    await serveSome(service)
    expect(containing(loaded(), PG_DRIVER).length).toBeGreaterThan(0)
    expect(containing(loaded(), PGLITE)).toEqual([])
    expect(containing(loaded(), DOCS_BUNDLE)).toEqual([])
  })

  it("PHOTO_STORE=s3: the AWS SDK, and the service serves", async () => {
    const server = await S3Server.start()
    try {
      const { loaded, service } = await startLogged({
        STORE: "memory",
        PHOTO_STORE: "s3",
        S3_ENDPOINT: server.endpoint,
        S3_BUCKET: server.options().bucket,
        AWS_ACCESS_KEY_ID: S3Server.CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: S3Server.CREDENTIALS.secretAccessKey
      })
      await serveSome(service)
      expect(containing(loaded(), AWS_SDK).length).toBeGreaterThan(0)
    } finally {
      await server.stop()
    }
  })
})
