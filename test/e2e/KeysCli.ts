/**
 * Runs the real `animal-store keys` and `animal-store webhooks` commands as users run them
 * (`npm run keys` runs `node build/main.js keys`: the bundle, which ServiceBundleSetup
 * brings up to date), as a child process with only the variables given (as a shell would
 * have them), and collects its output.
 */
import { execFile } from "node:child_process"
import * as Os from "node:os"
import { entry } from "../../scripts/bundle.ts"
import { nodeBin } from "./ServiceProcess.ts"

/** The format of a managed key, anywhere in a text. */
export const KEY_PATTERN = /as_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/g

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `animal-store ...args` (`node build/main.js ...args`) with `env`; resolves with its exit code and output. */
export const animalStore = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      nodeBin,
      [entry, ...args],
      { cwd: Os.tmpdir(), env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout, stderr })
      }
    )
  })

/** `animal-store keys ...args` (`npm run keys`) with `env`; resolves with its exit code and output. */
export const keysCli = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Promise<CliResult> =>
  animalStore(["keys", ...args], env)

/** `animal-store webhooks ...args` (`npm run webhooks`) with `env`; resolves with its exit code and output. */
export const webhooksCli = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Promise<CliResult> =>
  animalStore(["webhooks", ...args], env)

/** Runs `create`, and returns the one key it printed (fails unless it exits 0 with exactly one key). */
export const createKey = async (env: Readonly<Record<string, string>>, ...args: ReadonlyArray<string>): Promise<string> => {
  const result = await keysCli(["create", ...args], env)
  const keys = result.stdout.match(KEY_PATTERN) ?? []
  if (result.code !== 0 || keys.length !== 1 || result.stdout.trim() !== keys[0]) {
    throw new Error(`keys create ${args.join(" ")} gave ${JSON.stringify(result)}`)
  }
  return keys[0]!
}
