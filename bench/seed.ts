/**
 * Seeding a server over HTTP before it is measured: pets 1..count by POST, 32 at a
 * time over keep-alive connections (node:http: fetch costs this process several times
 * the CPU, taken from the server being seeded). A 503 is retried after its Retry-After
 * (as a well-behaved client would), and counted, since it says something about the
 * server. The rows match the SQL seed in pg-admin.ts: name "pet-<i>", category
 * 1 + i % 50, statuses in rotation.
 */
import { Agent, request } from "node:http"
import { HOST, sleep, STATUSES } from "./lib.ts"

const CONCURRENCY = 32
const MAX_ATTEMPTS = 20

/** The i-th seeded pet as a createPet body. */
export const seedPet = (i: number): string => {
  const status = STATUSES[i % STATUSES.length]
  const pet = { name: `pet-${i}`, categoryId: 1 + (i % 50) }
  return JSON.stringify(status === undefined ? pet : { ...pet, status })
}

export interface SeedResult {
  readonly idMin: number
  readonly idMax: number
  /** Distinct ids the server answered with. */
  readonly count: number
  /** 503 answers that were retried. */
  readonly retried503: number
  readonly millis: number
}

export const seedByPost = async (port: number, apiKey: string, count: number): Promise<SeedResult> => {
  const started = performance.now()
  const ids = new Set<number>()
  let next = 1
  let retried503 = 0
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const send = (body: string): Promise<{ readonly status: number; readonly retryAfter: string | undefined; readonly text: string }> =>
    new Promise((resolve, reject) => {
      const req = request({
        host: HOST,
        port,
        method: "POST",
        path: "/v1/pets",
        agent,
        headers: {
          authorization: `Bearer ${apiKey}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body)
        }
      }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const retryAfter = res.headers["retry-after"]
          resolve({ status: res.statusCode ?? 0, retryAfter, text: Buffer.concat(chunks).toString("utf8") })
        })
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end(body)
    })
  const post = async (i: number): Promise<void> => {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const response = await send(seedPet(i))
      if (response.status === 201) {
        ids.add(Number(/"id":(\d+)/.exec(response.text)?.[1]))
        return
      }
      if (response.status !== 503) throw new Error(`POST of pet ${i} answered ${response.status}: ${response.text.slice(0, 300)}`)
      retried503++
      await sleep(Math.min(1_000, 1_000 * Number(response.retryAfter ?? "0.05")))
    }
    throw new Error(`POST of pet ${i} answered 503 ${MAX_ATTEMPTS} times`)
  }
  const worker = async () => {
    while (next <= count) await post(next++)
  }
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  } finally {
    agent.destroy()
  }
  const sorted = [...ids].sort((a, b) => a - b)
  return { idMin: sorted[0] ?? 0, idMax: sorted[sorted.length - 1] ?? 0, count: ids.size, retried503, millis: performance.now() - started }
}
