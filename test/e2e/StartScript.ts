/**
 * package.json's start script, read the way the process tests need it: the variables it
 * sets, node's flags, the entry and its arguments, so that a test runs what `npm start` runs.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { repoRoot } from "./ServiceProcess.ts"

/** package.json's start script, split into its variables, node's flags, the entry and its arguments (`serve`). */
export const startScript = (): {
  readonly env: Record<string, string>
  readonly flags: Array<string>
  readonly entry: string
  readonly args: Array<string>
} => {
  const script: string = JSON.parse(Fs.readFileSync(Path.join(repoRoot, "package.json"), "utf8")).scripts.start
  const words = script.trim().split(/\s+/)
  const env: Record<string, string> = {}
  while (words[0] !== undefined && /^[A-Z_]+=/.test(words[0])) {
    const [name, value] = words.shift()!.split(/=(.*)/) as [string, string]
    env[name] = value
  }
  if (words.shift() !== "node") throw new Error(`the start script does not run node: ${script}`)
  const at = words.findIndex((word) => !word.startsWith("--"))
  const target = words[at]
  if (at === -1 || target === undefined) throw new Error(`the start script is not \`node <flags> <entry> <args>\`: ${script}`)
  return { env, flags: words.slice(0, at), entry: target, args: words.slice(at + 1) }
}
