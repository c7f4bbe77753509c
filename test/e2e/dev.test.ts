/**
 * `npm run dev`: the service from src/ under `node --watch`, restarted when a module it
 * loaded changes. Run in a temporary copy of the repository (src/, package.json,
 * node_modules linked), so the edit that triggers the restart touches no tracked file.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { ProcessGroup, stopAllGroups } from "./ProcessGroup.ts"
import { freePort, repoRoot, tempDir } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"

cleanUpProcesses()
afterEach(stopAllGroups)

const copyOfRepository = (): string => {
  const dir = tempDir("animal-store-dev-")
  Fs.cpSync(Path.join(repoRoot, "src"), Path.join(dir, "src"), { recursive: true })
  for (const file of ["package.json"]) Fs.copyFileSync(Path.join(repoRoot, file), Path.join(dir, file))
  Fs.symlinkSync(Path.join(repoRoot, "node_modules"), Path.join(dir, "node_modules"))
  return dir
}

const readyLines = (group: ProcessGroup): number => group.stdout.split("\n").filter((line) => line.includes('"msg":"ready"')).length

describe("npm run dev", () => {
  it("serves from src/ and restarts when a module it loaded changes", async () => {
    const dir = copyOfRepository()
    const port = await freePort()
    const dev = new ProcessGroup("npm", ["run", "dev"], {
      cwd: dir,
      env: {
        ...process.env,
        PATH: `${Path.join(repoRoot, "node_modules/.bin")}${Path.delimiter}${process.env["PATH"] ?? ""}`,
        STORE: "memory",
        PORT: String(port),
        API_KEYS: "dev-key",
        RATE_LIMIT: "off"
      }
    })
    await dev.waitFor(() => readyLines(dev) === 1, 60_000, "the first ready line")
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)

    // A module main.ts imports, changed as an edit would: the service is stopped and started again.
    const watched = Path.join(dir, "src/programs/StoreDefaults.ts")
    Fs.appendFileSync(watched, "\n// edited by the dev test\n")
    await dev.waitFor(() => readyLines(dev) === 2, 60_000, "a second ready line after the edit")
    const stopped = dev.stdout.split("\n").filter((line) => line.includes('"msg":"stopped"'))
    expect(stopped, dev.output).toHaveLength(1)
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)

    const exit = await dev.stop("SIGTERM", 10_000)
    expect(exit.code === 0 || exit.signal === "SIGTERM", JSON.stringify(exit)).toBe(true)
  }, 150_000)
})
