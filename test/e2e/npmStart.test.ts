/**
 * `npm start --silent`, the main command as a log shipper runs it: its stdout is the
 * service's log and nothing else (npm prints no banner, the bundler's path goes to
 * stderr), every line a JSON object in pino's shape, which pino-pretty, the ecosystem's
 * reader, shows as messages. npm itself is left in its ordinary (text) mode.
 */
import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { ProcessGroup, stopAllGroups } from "./ProcessGroup.ts"
import { freePort, repoRoot } from "./ServiceProcess.ts"

afterEach(stopAllGroups)

const binPath = `${Path.join(repoRoot, "node_modules/.bin")}${Path.delimiter}${process.env["PATH"] ?? ""}`

describe("npm start", () => {
  it("leaves npm's own output as npm writes it: text, not JSON", () => {
    const json = spawnSync("npm", ["config", "get", "json"], { cwd: repoRoot, encoding: "utf8", env: { ...process.env, PATH: binPath } })
    expect(json.status, json.stderr).toBe(0)
    expect(json.stdout.trim()).toBe("false")
  })

  it("with --silent writes only JSON log lines to stdout, which pino-pretty reads", async () => {
    const port = await freePort()
    const start = new ProcessGroup("npm", ["start", "--silent"], {
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
    // npm printed no banner, on either stream.
    expect(start.output).not.toContain("> animal-store@")

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
