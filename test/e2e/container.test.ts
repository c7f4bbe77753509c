/**
 * The deployment as the Dockerfile makes it. Three checks:
 * - the Dockerfile's CMD runs what package.json's start script runs (same flags, same
 *   compile cache), so the two cannot drift apart;
 * - the production tree, laid out as the image lays it out (package.json, the bundle,
 *   PGlite and sharp with its binding, as the Dockerfile's COPY lines name them, in a clean
 *   directory outside the repository: no npm install, as the package has no runtime
 *   dependencies), serves on the memory and the embedded store, an upload included (sharp
 *   loads on the first): a module the bundle leaves to node_modules and the image does not
 *   copy fails here;
 * - the image itself builds, runs as a non-root user, becomes healthy, serves, and stops
 *   cleanly on `docker stop` — only where a container engine answers and the base image is
 *   present (skipped, saying which, elsewhere; this check needs neither network nor pulls).
 */
import { execFile, execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { entry } from "../../scripts/bundle.ts"
import { jpeg } from "../adapters/images/TestImages.ts"
import { createPet, killAll, listAll, nodeBin, removeTempDirs, repoRoot, startService, tempDir } from "./ServiceProcess.ts"
import { startScript } from "./StartScript.ts"

const run = promisify(execFile)
const API_KEY = "container-test-key"
const BASE_IMAGE = "node:24-slim"

afterEach(killAll)
afterAll(async () => {
  await killAll()
  removeTempDirs()
})

const dockerfile = () => Fs.readFileSync(Path.join(repoRoot, "Dockerfile"), "utf8")

/** The node_modules the image's runtime stage copies from the build stage, in its order. */
const imagedModules = (): ReadonlyArray<string> =>
  [...dockerfile().matchAll(/^COPY --from=build \/app\/(node_modules\/\S+) (node_modules\/\S+)$/gm)].map(([, from, to]) => {
    if (from !== to) throw new Error(`the image copies ${from} to ${to}`)
    return from!
  })

describe("the Dockerfile", () => {
  it("runs what npm start runs: the bundle with the start script's flags and compile cache", () => {
    const start = startScript()
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile())?.[1]
    expect(cmd, "a CMD in exec form").toBeDefined()
    expect(JSON.parse(cmd!)).toEqual(["node", ...start.flags, start.entry, ...start.args])
    for (const [name, value] of Object.entries(start.env)) {
      expect(dockerfile(), name).toMatch(new RegExp(`^\\s*(ENV )?${name}=${value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s`, "m"))
    }
    // Nothing to install at run time: the package's dependencies are all optional peers or dev.
    expect(dockerfile()).not.toMatch(/^RUN npm (ci|install)\b.*--omit=dev/m)
    const manifest = JSON.parse(Fs.readFileSync(Path.join(repoRoot, "package.json"), "utf8")) as { dependencies?: object }
    expect(manifest.dependencies ?? {}).toEqual({})
    expect(dockerfile()).toMatch(/^ENV NODE_ENV=production /m)
    expect(dockerfile()).toMatch(/^COPY --from=build \/app\/node_modules\/@electric-sql\/pglite node_modules\/@electric-sql\/pglite$/m)
    expect(dockerfile()).toMatch(/^USER node$/m)
  })
})

describe("the production tree (package.json, the bundle, PGlite and sharp, in a clean directory)", () => {
  let dir: string | undefined

  /** Installed once for the file, as the image does; the npm cache makes it quick when warm. */
  const productionTree = async (): Promise<string> => {
    if (dir !== undefined) return dir
    const made = tempDir("animal-store-production-")
    Fs.copyFileSync(Path.join(repoRoot, "package.json"), Path.join(made, "package.json"))
    // The optional peers the image copies from the full install, as its COPY lines name them.
    for (const module of imagedModules()) {
      Fs.cpSync(Path.join(repoRoot, module), Path.join(made, module), { recursive: true })
    }
    // The bundle vitest's global setup built: build/main.js and the build it points at.
    const build = /import "\.\/([0-9a-f]{16})\/main\.js"/.exec(Fs.readFileSync(entry, "utf8"))?.[1]
    if (build === undefined) throw new Error(`${entry} points at no build`)
    Fs.mkdirSync(Path.join(made, "build"))
    Fs.cpSync(Path.join(Path.dirname(entry), build), Path.join(made, "build", build), { recursive: true })
    Fs.copyFileSync(entry, Path.join(made, "build", "main.js"))
    dir = made
    return made
  }

  it("holds no package but PGlite and sharp with what sharp loads", async () => {
    const tree = await productionTree()
    expect(imagedModules()).toEqual([
      "node_modules/@electric-sql/pglite",
      "node_modules/sharp",
      "node_modules/@img",
      "node_modules/detect-libc",
      "node_modules/semver"
    ])
    expect(Fs.readdirSync(Path.join(tree, "node_modules")).filter((name) => name !== ".cache").sort())
      .toEqual(["@electric-sql", "@img", "detect-libc", "semver", "sharp"])
    expect(Fs.readdirSync(Path.join(tree, "node_modules", "@electric-sql"))).toEqual(["pglite"])
  }, 300_000)

  it("runs the commands from the bundle (build/main.js migrate, keys, webhooks) for a new data directory, then serves with its key", async () => {
    const tree = await productionTree()
    const env = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", DATA_DIR: Path.join(tempDir(), "data") }
    const command = (name: string, args: ReadonlyArray<string>) =>
      run(nodeBin, [Path.join(tree, "build", "main.js"), name, ...args], { cwd: tree, env, timeout: 120_000 })
    expect((await command("migrate", ["apply"])).stdout).toMatch(/^Applied 0001_create_pets$/m)
    const key = (await command("keys", ["create", "--name", "image", "--scope", "write"])).stdout.trim()
    expect(key).toMatch(/^as_[0-9a-f]{12}_/)
    expect((await command("webhooks", ["list"])).stdout.trim()).toBe("ID  URL  TYPES  CREATED  STATE")
    const start = startScript()
    const service = await startService({
      cwd: tree,
      nodeArgs: [...start.flags, start.entry, ...start.args],
      env: { ...start.env, STORE: "embedded", DATA_DIR: env.DATA_DIR, MIGRATE: "off" },
      startTimeoutMs: 60_000
    })
    expect((await createPet(service, key, { name: "Rex", categoryId: 1 })).name).toBe("Rex")
    expect((await service.stop()).code).toBe(0)
  }, 300_000)

  it.each([
    ["memory", () => ({ STORE: "memory" })],
    ["embedded", () => ({ STORE: "embedded", DATA_DIR: Path.join(tempDir(), "data") })]
  ])("serves on the %s store: /healthz, a create, a list and an upload", async (_, storeEnv) => {
    const tree = await productionTree()
    const start = startScript()
    const service = await startService({
      cwd: tree,
      nodeArgs: [...start.flags, start.entry, ...start.args],
      env: { ...start.env, ...storeEnv(), API_KEYS: API_KEY },
      startTimeoutMs: 60_000
    })
    expect((await service.request("GET", "/healthz")).status).toBe(200)
    const created = await createPet(service, API_KEY, { name: "Rex", categoryId: 1, status: "available" })
    expect((await listAll(service, API_KEY)).pets).toEqual([created])
    // sharp and its binding load from the tree on the first upload.
    const upload = await fetch(`${service.baseUrl}/v1/pets/${created.id}/photos`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "image/jpeg" },
      body: new Uint8Array(await jpeg()),
      signal: AbortSignal.timeout(30_000)
    })
    expect(upload.status, await upload.text()).toBe(201)
    expect((await service.stop()).code).toBe(0)
    expect(service.stderr).toBe("")
  }, 300_000)
})

// ---------------------------------------------------------------------------
// The image

const engineProblem = ((): string | undefined => {
  try {
    execFileSync("docker", ["info"], { stdio: "pipe", timeout: 15_000 })
  } catch (error) {
    const detail = String((error as { stderr?: Buffer }).stderr ?? error).trim().split("\n").at(-1)
    return `no container engine answers (\`docker info\`: ${detail})`
  }
  try {
    execFileSync("docker", ["image", "inspect", BASE_IMAGE], { stdio: "pipe", timeout: 15_000 })
  } catch {
    return `the base image ${BASE_IMAGE} is not present (docker pull ${BASE_IMAGE})`
  }
  return undefined
})()

if (engineProblem !== undefined) console.warn(`SKIPPED: the container image test: ${engineProblem}`)

const docker = async (...args: ReadonlyArray<string>): Promise<string> =>
  (await run("docker", args, { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 })).stdout.trim()

describe.skipIf(engineProblem !== undefined)("the container image", () => {
  const tag = `animal-store-test:${process.pid}`
  let container: string | undefined

  afterAll(async () => {
    if (container !== undefined) await docker("rm", "-f", container).catch(() => undefined)
    await docker("image", "rm", "-f", tag).catch(() => undefined)
  })

  it("builds, runs as a non-root user, turns healthy, serves, and stops cleanly on docker stop", async () => {
    await docker("build", "--pull=false", "-t", tag, repoRoot)
    container = await docker("run", "-d", "-p", "127.0.0.1::8080", "-e", `API_KEYS=${API_KEY}`, tag)
    expect(await docker("exec", container, "id", "-u")).not.toBe("0")
    const deadline = Date.now() + 90_000
    let health = ""
    while (health !== "healthy" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      health = await docker("inspect", "--format", "{{.State.Health.Status}}", container)
    }
    expect(health).toBe("healthy")
    const address = (await docker("port", container, "8080/tcp")).split("\n")[0]!
    const base = `http://${address}`
    const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" }
    const created = await fetch(`${base}/v1/pets`, { method: "POST", headers, body: `{"name":"Rex","categoryId":1}` })
    expect(created.status).toBe(201)
    const listed = await fetch(`${base}/v1/pets`, { headers })
    expect(await listed.json()).toEqual([{ id: 1, name: "Rex", categoryId: 1, tags: [], version: 1 }])
    // DATA_DIR is the volume: the embedded store's files are there.
    expect(await docker("exec", container, "ls", "/data")).toMatch(/animal-store\.pid/)
    await docker("stop", "--time", "15", container)
    expect(await docker("inspect", "--format", "{{.State.ExitCode}}", container)).toBe("0")
  }, 900_000)
})
