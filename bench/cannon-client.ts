/**
 * The orchestrator's handle on the autocannon process (cannon.ts): one process for the
 * whole section, one run at a time over IPC.
 */
import type { ChildProcess } from "node:child_process"
import type { CannonArgs, CannonReply, CannonRequest, CannonResult } from "./cannon.ts"
import { BENCH_DIR, NODE, ROOT, spawnTracked, stopChild } from "./lib.ts"
import { seedByPost } from "./seed.ts"

export interface LoadGenerator {
  readonly run: (args: CannonArgs) => Promise<CannonResult>
  readonly stop: () => Promise<void>
}

export const startLoadGenerator = (): LoadGenerator => {
  const child: ChildProcess = spawnTracked(NODE, [`${BENCH_DIR}cannon.ts`], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "pipe", "ipc"]
  })
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4_000)
  })
  let nextId = 0
  const run = (args: CannonArgs): Promise<CannonResult> =>
    new Promise((resolve, reject) => {
      const id = ++nextId
      // Longest a run may take: its duration, a 10 s request timeout, and slack.
      const deadline = setTimeout(() => {
        cleanup()
        reject(new Error(`load generator did not answer within ${args.seconds + 30} s: ${stderr.trim().slice(-500)}`))
      }, (args.seconds + 30) * 1_000)
      const onMessage = (reply: CannonReply) => {
        if (reply.id !== id) return
        cleanup()
        if ("error" in reply) reject(new Error(`load generator: ${reply.error}`))
        else resolve(reply.result)
      }
      const onExit = (code: number | null) => {
        cleanup()
        reject(new Error(`load generator exited (${code}): ${stderr.trim().slice(-500)}`))
      }
      const cleanup = () => {
        clearTimeout(deadline)
        child.off("message", onMessage)
        child.off("exit", onExit)
      }
      child.on("message", onMessage)
      child.once("exit", onExit)
      child.send({ id, args } satisfies CannonRequest)
    })
  return { run, stop: () => stopChild(child) }
}

/**
 * Seeds `pets` pets by POST into the server at `port` (all of them, or it throws naming
 * `label`), then gives runs of a fixed number of requests of one scenario against them, at
 * `connections`, always with seed 1: the same requests in every run, for counting per request.
 */
export const seededFixedRuns = async (
  loader: LoadGenerator,
  target: { readonly label: string; readonly port: number; readonly apiKey: string; readonly connections: number; readonly pets: number }
) => {
  const seeded = await seedByPost(target.port, target.apiKey, target.pets)
  if (seeded.count !== target.pets) throw new Error(`${target.label}: seeding stored ${seeded.count} pets`)
  const { apiKey, connections, port } = target
  return (scenario: CannonArgs["scenario"], amount: number): Promise<CannonResult> =>
    loader.run({ port, apiKey, connections, idMin: seeded.idMin, idMax: seeded.idMax, scenario, seconds: 600, amount, seed: 1 })
}

/** The answers of a run that were not 2xx. */
export const not2xx = (result: CannonResult): number =>
  result.requests - Object.entries(result.statuses)
    .filter(([status]) => status.startsWith("2"))
    .reduce((sum, [, n]) => sum + n, 0)
