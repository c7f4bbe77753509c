/**
 * `npm start`, the main command: its stdout is the service's log and nothing else (npm's
 * banners and the bundler's path go to stderr), every line a JSON object in pino's shape,
 * which pino-pretty, the ecosystem's reader, shows as messages.
 */
import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { ProcessGroup, stopAllGroups } from "./ProcessGroup.ts"
import { freePort, repoRoot } from "./ServiceProcess.ts"

afterEach(stopAllGroups)

const binPath = `${Path.join(repoRoot, "node_modules/.bin")}${Path.delimiter}${process.env["PATH"] ?? ""}`

describe("npm start", () => {
  it("writes only JSON log lines to stdout, which pino-pretty reads", async () => {
    const port = await freePort()
    const start = new ProcessGroup("npm", ["start"], {
      cwd: repoRoot,
      env: { ...process.env, PATH: binPath, STORE: "memory", PORT: String(port), API_KEYS: "npm-start-key", RATE_LIMIT: "off" }
    })
    await start.waitFor(() => start.stdout.includes('"msg":"ready"'), 60_000, "the ready line")
    const answer = await fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { authorization: "Bearer npm-start-key" } })
    expect(answer.status).toBe(200)
    await start.waitFor(() => start.stdout.includes('"msg":"request completed"'), 5_000, "the request line")
    // As a terminal's Ctrl-C or a container's stop would: the service drains and stops,
    // and npm, signalled too, ends by the same signal.
    expect(await start.stop("SIGTERM"), start.output).toEqual({ code: null, signal: "SIGTERM" })

    const lines = start.stdout.split("\n").filter((line) => line !== "")
    for (const line of lines) {
      expect(() => JSON.parse(line), `not a JSON line: ${line}`).not.toThrow()
    }
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(parsed.map((line) => line["msg"])).toEqual(expect.arrayContaining(["starting", "ready", "request completed", "stopped"]))
    // npm's banner went to stderr.
    expect(start.stderr).toContain("> animal-store@")

    const pretty = spawnSync(Path.join(repoRoot, "node_modules/.bin/pino-pretty"), ["--colorize=false"], {
      input: start.stdout,
      encoding: "utf8",
      timeout: 30_000
    })
    expect(pretty.status, pretty.stderr).toBe(0)
    expect(pretty.stdout).toMatch(/INFO \(\d+\): starting/)
    expect(pretty.stdout).toMatch(/INFO \(\d+\): request completed/)
    expect(pretty.stdout).toContain('"method": "GET"')
    expect(pretty.stdout).toContain('"statusCode": 200')
    expect(pretty.stdout).toMatch(/INFO \(\d+\): stopped/)
  }, 90_000)
})
