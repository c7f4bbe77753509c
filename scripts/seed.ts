/**
 * `npm run seed`: demo data for a first look and for the docs page, through the running
 * service's HTTP API (so every rule holds, on whichever store it runs): 36 pets across
 * four categories and every status (none included), and a few orders in each order
 * status. Each run adds another set.
 *
 * Where: ANIMAL_STORE_URL (default http://127.0.0.1:$PORT, PORT 8080). The key: API_KEY,
 * else the first of API_KEYS (as the service reads them, `.env` included).
 */
import "../src/programs/EnvFile.ts"

const base = (process.env["ANIMAL_STORE_URL"] ?? `http://127.0.0.1:${process.env["PORT"] ?? "8080"}`).replace(/\/+$/, "")
const key = process.env["API_KEY"] ?? process.env["API_KEYS"]?.split(",")[0]?.trim()
if (key === undefined || key === "") {
  console.error("seed: set API_KEY (a write key), or API_KEYS")
  process.exit(1)
}

const NAMES = ["Rex", "Luna", "Milo", "Bella", "Oscar", "Coco", "Nala", "Simba", "Pepper", "Ziggy", "Mochi", "Hazel"]
const CATEGORIES = [1, 2, 3, 4]
// Most pets on sale; some already ordered or sold, some not yet on offer (no status).
const STATUSES = ["available", "available", "available", "pending", "sold", undefined] as const

const call = async (method: "POST", path: string, body?: unknown): Promise<Record<string, unknown>> => {
  const response = await fetch(`${base}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return JSON.parse(text) as Record<string, unknown>
}

try {
  const pets: Array<{ readonly id: unknown; readonly status: string | undefined }> = []
  for (let i = 0; i < 36; i++) {
    const status = STATUSES[i % STATUSES.length]
    const pet = { name: `${NAMES[i % NAMES.length]} ${Math.floor(i / NAMES.length) + 1}`, categoryId: CATEGORIES[i % 4], status }
    pets.push({ id: (await call("POST", "/pets", pet))["id"], status })
  }
  // Orders on available pets, one walked to each order status.
  const steps = [[], ["approve"], ["approve", "deliver"], ["approve", "deliver"], ["cancel"], ["approve", "cancel"]] as const
  const forSale = pets.filter((pet) => pet.status === "available")
  for (const [i, path] of steps.entries()) {
    const order = await call("POST", "/store/orders", { petId: forSale[i]!.id })
    for (const step of path) await call("POST", `/store/orders/${String(order["id"])}/${step}`)
  }
  console.error(`seed: ${pets.length} pets and ${steps.length} orders added at ${base}`)
} catch (error) {
  console.error(`seed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
}
