/**
 * Start-up time of Animal Store: from spawning the service as `npm start` does (`node build/main.js`) to the first 200 on
 * an authenticated GET /v1/pets, per store and state of its data (existing or empty).
 * Each sample is a fresh process, stopped with SIGTERM before the next one starts.
 */
import { median, stopChild, waitExit } from "./lib.ts"
import { spawnService, waitFor200 } from "./servers.ts"

export interface StartupCase {
  readonly mode: string
  readonly data: string
  /** The environment of one sample (called per sample, so each can get a fresh directory). */
  readonly env: (sample: number) => Record<string, string>
}

export interface StartupRow {
  readonly mode: string
  readonly data: string
  readonly samplesMs: ReadonlyArray<number>
  readonly medianMs: number
  /** Exit statuses other than 0 after SIGTERM, or startup failures. */
  readonly problems: ReadonlyArray<string>
}

export const measureStartup = async (options: {
  readonly work: string
  readonly apiKey: string
  readonly samples: number
  readonly cases: ReadonlyArray<StartupCase>
}): Promise<ReadonlyArray<StartupRow>> => {
  const rows: Array<StartupRow> = []
  for (const startupCase of options.cases) {
    const samplesMs: Array<number> = []
    const problems: Array<string> = []
    for (let sample = 0; sample < options.samples; sample++) {
      const server = await spawnService({
        name: `startup ${startupCase.mode} ${startupCase.data}`,
        work: options.work,
        apiKey: options.apiKey,
        env: startupCase.env(sample)
      })
      try {
        samplesMs.push(await waitFor200(server, "/v1/pets", { authorization: `Bearer ${options.apiKey}` }, 90_000))
      } catch (error) {
        problems.push(error instanceof Error ? error.message : String(error))
      }
      await stopChild(server.child)
      const code = await waitExit(server.child)
      if (code !== 0) problems.push(`exit ${code} after SIGTERM`)
    }
    rows.push({ mode: startupCase.mode, data: startupCase.data, samplesMs, medianMs: median(samplesMs), problems })
  }
  return rows
}
