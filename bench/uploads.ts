/**
 * Photo uploads: a 3 MB, 12-megapixel JPEG (4000 x 3000, made here with sharp: gradients
 * with noise, quality 85) posted to `POST /v1/pets/{id}/photos` of Animal Store on
 * PostgreSQL and on its embedded database, where the bytes go to `photo_blobs`.
 *
 * - The upload alone: one at a time, its time (the client's, to the 201) and the server's
 *   CPU for it, medians.
 * - The list beside uploads: the p99 of `GET /v1/pets?limit=20` (10 connections) alone, then
 *   while two clients upload without pause; target: at most 2x alone.
 * - Peak RSS with 4 uploads at once (from /proc's VmHWM, reset before them where the kernel
 *   allows, else the peak since start); bound: the 150 MB cap plus 100 MB.
 */
import { join } from "node:path"
import { startLoadGenerator } from "./cannon-client.ts"
import { cpuMillisOf, fmt, fmtRatio, median, peakRssBytes, resetPeakRss, stopChild } from "./lib.ts"
import { createDatabase, dropDatabase } from "./pg-admin.ts"
import type { Report } from "./report.ts"
import { type Server, startService } from "./servers.ts"

export interface UploadsOptions {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  /** Admin URL of the local PostgreSQL server, or undefined to leave PostgreSQL out. */
  readonly pgUrl: string | undefined
}

const WIDTH = 4_000
const HEIGHT = 3_000
const PETS = 40
const SEQUENTIAL = 6
const LIST_SECONDS = 5
const LIST_CONNECTIONS = 10
const P99_BOUND = 2
const RSS_BOUND_MB = 250

/** The JPEG: smooth gradients with a little noise, so it is photo-sized (about 3 MB) rather than a flat colour's few KB. */
const makeJpeg = async (): Promise<Uint8Array> => {
  const { default: sharp } = await import("sharp")
  const raw = Buffer.alloc(WIDTH * HEIGHT * 3)
  let seed = 12_345
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff
      const noise = (seed >> 16) % 20
      const i = (y * WIDTH + x) * 3
      raw[i] = (x * 255 / WIDTH + noise) & 255
      raw[i + 1] = (y * 255 / HEIGHT + noise) & 255
      raw[i + 2] = ((x + y) * 128 / (WIDTH + HEIGHT) + noise) & 255
    }
  }
  return new Uint8Array(await sharp(raw, { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).jpeg({ quality: 85 }).toBuffer())
}

interface StoreResult {
  readonly uploadMs: number
  readonly uploadCpuMs: number | undefined
  readonly listP99Alone: number
  readonly listP99Beside: number
  readonly uploadsBeside: number
  readonly peakRssMb: number | undefined
  readonly peakSinceStart: boolean
  readonly refused: Record<string, number>
}

export const uploadsSection = async (options: UploadsOptions): Promise<Record<string, unknown>> => {
  const { apiKey, report, work } = options
  report.heading(`Photo uploads (a ${WIDTH} x ${HEIGHT} JPEG; list p99 alone and beside two uploading clients; peak RSS with 4 at once)`)
  const jpeg = await makeJpeg()
  report.say(`   the image: ${fmt(jpeg.byteLength / 1_000_000)} MB, ${(WIDTH * HEIGHT / 1_000_000).toFixed(0)} megapixels`)
  const loader = startLoadGenerator()
  const results: Record<string, StoreResult> = {}
  try {
    const stores: ReadonlyArray<readonly [string, () => Promise<{ server: Server; drop: () => Promise<void> }>]> = [
      ...(options.pgUrl === undefined ? [] : [[
        "postgres",
        async () => {
          const db = await createDatabase(options.pgUrl!, "uploads")
          const server = await startService({ name: "uploads-postgres", work, apiKey, env: { STORE: "postgres", DATABASE_URL: db.url } })
          return { server, drop: () => dropDatabase(options.pgUrl!, db.name) }
        }
      ] as const]),
      [
        "embedded",
        async () => ({
          server: await startService({
            name: "uploads-embedded",
            work,
            apiKey,
            env: { STORE: "embedded", DATA_DIR: join(work, "uploads-embedded") }
          }),
          drop: () => Promise.resolve()
        })
      ]
    ]
    if (options.pgUrl === undefined) report.note("uploads: PostgreSQL left out: no usable PostgreSQL server")
    for (const [store, open] of stores) {
      const { drop, server } = await open()
      try {
        results[store] = await measure(server, apiKey, jpeg, loader)
      } finally {
        await stopChild(server.child, 30_000)
        await drop()
      }
    }
  } finally {
    await loader.stop()
  }
  report.table(
    ["store", "upload ms (median)", "server CPU ms per upload", "list p99 alone ms", "list p99 beside uploads ms", "beside / alone (<= 2x)", "uploads during", "peak RSS, 4 at once (<= 250 MB)", "refused"],
    Object.entries(results).map(([store, r]) => [
      store,
      fmt(r.uploadMs),
      fmt(r.uploadCpuMs),
      fmt(r.listP99Alone),
      fmt(r.listP99Beside),
      `${fmtRatio(r.listP99Beside / r.listP99Alone)} ${r.listP99Beside / r.listP99Alone <= P99_BOUND ? "met" : "not met"}`,
      String(r.uploadsBeside),
      r.peakRssMb === undefined
        ? "-"
        : `${fmt(r.peakRssMb)} MB${r.peakSinceStart ? " (since start)" : ""} ${r.peakRssMb <= RSS_BOUND_MB ? "met" : "not met"}`,
      Object.entries(r.refused).map(([status, n]) => `${n}x ${status}`).join(", ") || "none"
    ])
  )
  return { imageBytes: jpeg.byteLength, results }
}

const measure = async (
  server: Server,
  apiKey: string,
  jpeg: Uint8Array,
  loader: ReturnType<typeof startLoadGenerator>
): Promise<StoreResult> => {
  const base = `http://127.0.0.1:${server.port}/v1`
  const authorization = `Bearer ${apiKey}`
  const pets: Array<string> = []
  for (let i = 0; i < PETS; i++) {
    const response = await fetch(`${base}/pets`, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ name: `Photographed ${i}`, categoryId: 1 })
    })
    if (response.status !== 201) throw new Error(`creating a pet answered ${response.status}`)
    pets.push(String((await response.json() as { id: number | string }).id))
  }
  const refused: Record<string, number> = {}
  let next = 0
  // Each upload goes to the next pet in turn, so none reaches the 20 photos a pet may have.
  const upload = async (): Promise<number> => {
    const pet = pets[next++ % pets.length]!
    const response = await fetch(`${base}/pets/${pet}/photos`, {
      method: "POST",
      headers: { authorization, "content-type": "image/jpeg" },
      body: jpeg
    })
    await response.arrayBuffer()
    if (response.status !== 201) refused[String(response.status)] = (refused[String(response.status)] ?? 0) + 1
    return response.status
  }

  const times: Array<number> = []
  const cpus: Array<number> = []
  await upload()
  for (let i = 0; i < SEQUENTIAL; i++) {
    const cpuBefore = cpuMillisOf(server.child.pid)
    const started = performance.now()
    await upload()
    times.push(performance.now() - started)
    const cpuAfter = cpuMillisOf(server.child.pid)
    if (cpuBefore !== undefined && cpuAfter !== undefined) cpus.push(cpuAfter - cpuBefore)
  }

  const list = () =>
    loader.run({ port: server.port, scenario: "list", connections: LIST_CONNECTIONS, seconds: LIST_SECONDS, apiKey, idMin: 1, idMax: PETS, seed: 1 })
  await list()
  const alone = await list()
  let uploading = true
  let uploadsBeside = 0
  const client = async () => {
    while (uploading) {
      await upload()
      uploadsBeside++
    }
  }
  const clients = [client(), client()]
  const beside = await list()
  uploading = false
  await Promise.all(clients)

  const reset = resetPeakRss(server.child.pid)
  await Promise.all([upload(), upload(), upload(), upload()])
  const peak = peakRssBytes(server.child.pid)
  return {
    uploadMs: median(times),
    uploadCpuMs: cpus.length === 0 ? undefined : median(cpus),
    listP99Alone: alone.latencyMs.p99,
    listP99Beside: beside.latencyMs.p99,
    uploadsBeside,
    peakRssMb: peak === undefined ? undefined : peak / 1_000_000,
    peakSinceStart: !reset,
    refused
  }
}
