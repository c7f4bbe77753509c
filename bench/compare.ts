/**
 * Interleaved A/B timing: the measured side and its reference run in alternating
 * rounds (ABBA order), so a burst of noise from the shared cores lands on both
 * rather than on whichever happened to run at that moment.
 */
import { Effect } from "effect"
import { median } from "./lib.ts"

/** Runs `count` operations starting at operation index `from`; answers the elapsed milliseconds. */
export type Chunk = (from: number, count: number) => Effect.Effect<number, unknown>

export interface Comparison {
  /** Operations each side completed. */
  readonly count: number
  readonly subjectMs: number
  readonly referenceMs: number
  readonly subjectOpsPerSec: number
  readonly referenceOpsPerSec: number
  /** Median of the per-round ratios (subject time / reference time): robust to one noisy round. */
  readonly ratio: number
  /** Total subject time / total reference time. */
  readonly totalRatio: number
  /** Smallest and largest per-round ratio: the spread shows how noisy the run was. */
  readonly ratioMin: number
  readonly ratioMax: number
  readonly rounds: number
}

/**
 * Splits `total` operations into `rounds` chunks per side and times them alternately.
 * Stops early (after at least one round) once `budgetMs` of wall time has been spent.
 */
export const compare = (options: {
  readonly total: number
  readonly rounds: number
  readonly budgetMs: number
  readonly subject: Chunk
  readonly reference: Chunk
}): Effect.Effect<Comparison, unknown> =>
  Effect.gen(function*() {
    const chunk = Math.max(1, Math.floor(options.total / options.rounds))
    const started = performance.now()
    let subjectMs = 0
    let referenceMs = 0
    let done = 0
    const ratios: Array<number> = []
    for (let round = 0; round < options.rounds; round++) {
      if (round > 0 && performance.now() - started > options.budgetMs) break
      const from = round * chunk
      let s: number
      let r: number
      if (round % 2 === 0) {
        s = yield* options.subject(from, chunk)
        r = yield* options.reference(from, chunk)
      } else {
        r = yield* options.reference(from, chunk)
        s = yield* options.subject(from, chunk)
      }
      subjectMs += s
      referenceMs += r
      done += chunk
      ratios.push(s / Math.max(r, 1e-6))
    }
    return {
      count: done,
      subjectMs,
      referenceMs,
      subjectOpsPerSec: (done * 1000) / subjectMs,
      referenceOpsPerSec: (done * 1000) / referenceMs,
      ratio: median(ratios),
      totalRatio: subjectMs / Math.max(referenceMs, 1e-6),
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios),
      rounds: ratios.length
    }
  })

/** Times a loop of effects, one after another. */
export const effectChunk = (op: (i: number) => Effect.Effect<unknown, unknown>): Chunk => (from, count) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    for (let i = from; i < from + count; i++) yield* op(i)
    return performance.now() - t0
  })

// Results of reference calls flow here so that the JIT cannot drop the calls as dead code.
let sink: unknown

/**
 * Times a loop of plain synchronous calls (no Effect runtime involved). A reference much
 * faster than its subject can run the same range `repeat` times (only for operations
 * without side effects); the answer is the time of one pass, measured more precisely.
 */
export const syncChunk = (op: (i: number) => unknown, repeat = 1): Chunk => (from, count) =>
  Effect.sync(() => {
    const t0 = performance.now()
    for (let r = 0; r < repeat; r++) {
      for (let i = from; i < from + count; i++) sink = op(i)
    }
    return (performance.now() - t0) / repeat
  })

/** Keeps the sink observable (never true in practice). */
export const sinkIsSet = (): boolean => sink === sinkIsSet
