/**
 * Runs the real `animal-store-keys` command (`node src/programs/KeysProgram.ts`), or
 * `animal-store-webhooks` (`node src/programs/WebhooksProgram.ts`), as a child process,
 * with only the variables given (as a shell would have them), and collects its output.
 */
import { execFile } from "node:child_process"
import * as Os from "node:os"
import * as Path from "node:path"
import { nodeBin, repoRoot } from "./ServiceProcess.ts"

export const keysScript = Path.join(repoRoot, "src/programs/KeysProgram.ts")

/** The format of a managed key, anywhere in a text. */
export const KEY_PATTERN = /as_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/g

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `node script ...args` with `env`; resolves with its exit code and output. */
const runScript = (script: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      nodeBin,
      [script, ...args],
      { cwd: Os.tmpdir(), env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout, stderr })
      }
    )
  })

/** `animal-store-keys ...args` with `env`; resolves with its exit code and output. */
export const keysCli = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Promise<CliResult> =>
  runScript(keysScript, args, env)

/** `animal-store-webhooks ...args` with `env` (`npm run webhooks`); resolves with its exit code and output. */
export const webhooksCli = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Promise<CliResult> =>
  runScript(Path.join(repoRoot, "src/programs/WebhooksProgram.ts"), args, env)

/** Runs `create`, and returns the one key it printed (fails unless it exits 0 with exactly one key). */
export const createKey = async (env: Readonly<Record<string, string>>, ...args: ReadonlyArray<string>): Promise<string> => {
  const result = await keysCli(["create", ...args], env)
  const keys = result.stdout.match(KEY_PATTERN) ?? []
  if (result.code !== 0 || keys.length !== 1 || result.stdout.trim() !== keys[0]) {
    throw new Error(`keys create ${args.join(" ")} gave ${JSON.stringify(result)}`)
  }
  return keys[0]!
}
