/**
 * `animal-store`, the one command (src/main.ts, bundled into build/): its subcommands
 * `serve`, `migrate`, `keys` and `webhooks`; and `npm run keys`, `webhooks` and `migrate`,
 * which run that bundle, never the TypeScript sources (loading those took a command
 * 3–5 s). What a process loads is seen through a preloaded hook (ModuleLog.ts).
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { entry } from "../../scripts/bundle.ts"
import { cleanUpProcesses } from "./Cleanup.ts"
import { animalStore } from "./KeysCli.ts"
import { repoRoot, startService, tempDir } from "./ServiceProcess.ts"

cleanUpProcesses()

const HOOK = fileURLToPath(new URL("./ModuleLog.ts", import.meta.url))
const binPath = `${Path.join(repoRoot, "node_modules/.bin")}${Path.delimiter}${process.env["PATH"] ?? ""}`

describe("animal-store", () => {
  it("names its four subcommands; with none it shows the same help and exits 1", async () => {
    const help = await animalStore(["--help"], {})
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toMatch(/^\s+animal-store <subcommand> \[flags\]$/m)
    for (const name of ["serve", "migrate", "keys", "webhooks"]) expect(help.stdout).toMatch(new RegExp(`^\\s+${name}\\s{2,}\\S`, "m"))
    const bare = await animalStore([], {})
    expect(bare.code).toBe(1)
    expect(bare.stdout).toBe(help.stdout)
    const serveHelp = await animalStore(["serve", "--help"], {})
    expect(serveHelp.code, serveHelp.stderr).toBe(0)
    expect(serveHelp.stdout).toMatch(/^\s+animal-store serve \[flags\]$/m)
    const unknown = await animalStore(["frob"], {})
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^animal-store: Unknown subcommand "frob".* \(see animal-store --help\)\n$/)
  })

  it("serve with a flag goes through the command line, and a SIGTERM still stops it cleanly", async () => {
    const service = await startService({ env: { STORE: "memory", API_KEYS: "k" }, nodeArgs: [entry, "serve", "--log-level", "info"] })
    expect((await service.request("GET", "/v1/pets", { apiKey: "k" })).status).toBe(200)
    expect(await service.stop()).toEqual({ code: 0, signal: null })
    expect(service.stdout).toContain('"signal":"SIGTERM","msg":"stopping"')
  })
})

describe("npm run keys, webhooks and migrate", () => {
  it.each(["keys", "webhooks", "migrate"])("npm run %s runs the bundle, not src/", async (name) => {
    const log = Path.join(tempDir("animal-store-modules-"), "modules.txt")
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile("npm", ["run", "-s", name, "--", "--help"], {
        cwd: repoRoot,
        env: { PATH: binPath, HOME: process.env["HOME"] ?? "", MODULE_LOG: log, NODE_OPTIONS: `--import=${HOOK}` },
        timeout: 120_000
      }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }))
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`^\\s+animal-store ${name} <subcommand> \\[flags\\]$`, "m"))
    const loaded = readFileSync(log, "utf8").split("\n").filter((url) => url.startsWith("file:")).map((url) => fileURLToPath(url))
    expect(loaded.filter((file) => file.startsWith(Path.join(repoRoot, "src")))).toEqual([])
    expect(loaded).toContain(Path.join(repoRoot, "build", "main.js"))
  }, 120_000)
})
