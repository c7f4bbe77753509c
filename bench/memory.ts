/**
 * Child process (run with --expose-gc): heap retained by N pets in one store kind.
 * One kind per process, so nothing else measured in the same heap is left over.
 *
 * - adapter: the in-memory PetRepository (Pet class instances, byId Map, `all` array,
 *   per-status arrays).
 * - plainMap: the reference, a Map of plain objects keyed by bigint id.
 * - plainIndexed: plain objects in the same three indexes the adapter keeps, to
 *   separate the cost of the objects from the cost of the indexes.
 *
 * Usage: node --expose-gc bench/memory.ts '{"kind":"adapter","count":100000,"resultPath":"..."}'
 */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import * as PetRepositoryMemory from "../src/adapters/memory/pets/PetRepositoryMemory.ts"
import { NewPet } from "../src/domain/pets/NewPet.ts"
import { STATUSES } from "./lib.ts"

export type MemoryKind = "adapter" | "plainMap" | "plainIndexed"

export interface MemoryArgs {
  readonly kind: MemoryKind
  readonly count: number
  readonly resultPath: string
}

export interface MemoryResult {
  readonly kind: MemoryKind
  readonly count: number
  readonly heapUsedBytes: number
  readonly bytesPerPet: number
  readonly buildMs: number
}

const args = JSON.parse(process.argv[2] ?? "{}") as MemoryArgs

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) {
  process.stderr.write("memory bench needs --expose-gc\n")
  process.exit(1)
}

const settle = (): number => {
  for (let i = 0; i < 4; i++) gc()
  return process.memoryUsage().heapUsed
}

// Each name is a distinct string of about the same length as in the other benchmarks;
// every kind builds (and so retains) the same strings. They come out of JSON.parse, as
// they do from a request body: flat strings. (A template literal would give a rope that
// stays bigger until something, such as the adapter's name validation, flattens it.)
const nameOf = (i: number): string => JSON.parse(`"Pet ${i} ${"abcdefghij".slice(0, i % 10)}"`) as string

interface PlainPet {
  readonly id: bigint
  readonly name: string
  readonly categoryId: bigint
  readonly status?: string
}

const plainPet = (i: number, id: bigint): PlainPet => {
  const status = STATUSES[i % STATUSES.length]
  const categoryId = BigInt(1 + (i % 7))
  return status === undefined ? { id, name: nameOf(i), categoryId } : { id, name: nameOf(i), categoryId, status }
}

const build = (): unknown => {
  switch (args.kind) {
    case "adapter": {
      const repo = Effect.runSync(PetRepositoryMemory.make)
      Effect.runSync(Effect.gen(function*() {
        for (let i = 0; i < args.count; i++) {
          const status = STATUSES[i % STATUSES.length]
          // Constructed the way the HTTP handler constructs them: already validated input.
          const input = new NewPet(
            status === undefined
              ? { name: nameOf(i) as NewPet["name"], categoryId: BigInt(1 + (i % 7)) as NewPet["categoryId"] }
              : {
                name: nameOf(i) as NewPet["name"],
                categoryId: BigInt(1 + (i % 7)) as NewPet["categoryId"],
                status
              },
            { disableChecks: true }
          )
          yield* repo.create(input)
        }
      }))
      return repo
    }
    case "plainMap": {
      const map = new Map<bigint, PlainPet>()
      for (let i = 0; i < args.count; i++) {
        const id = BigInt(i + 1)
        map.set(id, plainPet(i, id))
      }
      return map
    }
    case "plainIndexed": {
      const all: Array<PlainPet> = []
      const byId = new Map<bigint, PlainPet>()
      const byStatus = new Map<string, Array<PlainPet>>()
      for (let i = 0; i < args.count; i++) {
        const pet = plainPet(i, BigInt(i + 1))
        all.push(pet)
        byId.set(pet.id, pet)
        if (pet.status !== undefined) {
          const bucket = byStatus.get(pet.status)
          if (bucket === undefined) byStatus.set(pet.status, [pet])
          else bucket.push(pet)
        }
      }
      return { all, byId, byStatus }
    }
  }
}

const before = settle()
const t0 = performance.now()
const kept = build()
const buildMs = performance.now() - t0
const after = settle()
const result: MemoryResult = {
  kind: args.kind,
  count: args.count,
  heapUsedBytes: after - before,
  bytesPerPet: (after - before) / args.count,
  buildMs
}
writeFileSync(args.resultPath, JSON.stringify(result, null, 2))
// Keep the structure reachable until after the measurement.
if (kept === undefined) process.exitCode = 3
