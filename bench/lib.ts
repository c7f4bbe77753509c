/**
 * Shared helpers for the benchmark suite: child-process bookkeeping (every process the
 * suite starts is tracked and stopped at the end, even on error), statistics and table
 * formatting. Nothing here talks to anything but 127.0.0.1.
 */
import { type ChildProcess, spawn, type SpawnOptions } from "node:child_process"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

/** The repository root (the parent of bench/). */
export const ROOT = fileURLToPath(new URL("..", import.meta.url))
/** The bench/ directory. */
export const BENCH_DIR = fileURLToPath(new URL(".", import.meta.url))

/** The only host the suite talks to. */
export const HOST = "127.0.0.1"

// ---------------------------------------------------------------------------------------
// Child processes

const children = new Set<ChildProcess>()

/** Starts a process and tracks it until it exits, so {@link stopAll} can end it. */
export const spawnTracked = (command: string, args: ReadonlyArray<string>, options: SpawnOptions): ChildProcess => {
  const child = spawn(command, args, options)
  children.add(child)
  child.once("exit", () => children.delete(child))
  // A failure to start is reported through 'exit'/'error' to whoever waits on it.
  child.once("error", () => children.delete(child))
  return child
}

/** Resolves with the exit code (or signal name) once the child has exited. */
export const waitExit = (child: ChildProcess): Promise<number | string> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode)
    if (child.signalCode !== null) return resolve(child.signalCode)
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"))
    child.once("error", () => resolve("spawn-error"))
  })

/** SIGTERM, then SIGKILL after `graceMs` if the process is still there. Only this child's pid. */
export const stopChild = async (child: ChildProcess, graceMs = 5_000): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = waitExit(child)
  child.kill("SIGTERM")
  const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), graceMs).unref())
  if ((await Promise.race([exited, timer])) === "timeout") {
    child.kill("SIGKILL")
    await exited
  }
}

/** Stops every tracked child that is still running. */
export const stopAll = async (): Promise<void> => {
  await Promise.all([...children].map((child) => stopChild(child)))
}

/** Last-resort synchronous kill, for process 'exit' (no awaiting possible there). */
export const killAllSync = (): void => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
}

/** The Node 24 binary running this script; children use it too. */
export const NODE = process.execPath

export interface NodeChildResult<A> {
  readonly result: A | undefined
  readonly exit: number | string
  readonly stderr: string
  readonly timedOut: boolean
}

/**
 * Runs `node [nodeArgs] bench/<script> <jsonArg>` and returns what the child wrote to
 * `resultPath` (JSON). The child is killed after `timeoutMs`.
 */
export const runNodeChild = async <A>(options: {
  readonly script: string
  readonly arg: unknown
  readonly resultPath: string
  readonly timeoutMs: number
  readonly nodeArgs?: ReadonlyArray<string>
  readonly env?: NodeJS.ProcessEnv
  readonly echo?: boolean
}): Promise<NodeChildResult<A>> => {
  const child = spawnTracked(
    NODE,
    [...(options.nodeArgs ?? []), `${BENCH_DIR}${options.script}`, JSON.stringify(options.arg)],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: options.env ?? process.env }
  )
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-8_000)
  })
  child.stdout?.on("data", (chunk: Buffer) => {
    if (options.echo === true) process.stdout.write(chunk)
  })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    void stopChild(child, 3_000)
  }, options.timeoutMs)
  const exit = await waitExit(child)
  clearTimeout(timer)
  let result: A | undefined
  try {
    result = JSON.parse(readFileSync(options.resultPath, "utf8")) as A
  } catch {
    result = undefined
  }
  return { result, exit, stderr, timedOut }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, HOST, () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port"))))
    })
  })

// ---------------------------------------------------------------------------------------
// CPU time of another process (Linux /proc), to report server CPU per request: a figure
// that suffers less from the shared cores than wall-clock throughput does.

const CLOCK_TICKS_PER_SECOND = 100

/** utime + stime of `pid` in milliseconds, or undefined when /proc is not readable. */
export const cpuMillisOf = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const utime = Number(fields[11])
    const stime = Number(fields[12])
    if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined
    return ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND
  } catch {
    return undefined
  }
}

/**
 * CPU time of every process of this machine's PostgreSQL server (backends and auxiliary
 * processes: WAL writer, checkpointer, autovacuum), in milliseconds; 0 when none is visible.
 * With `database`, only the backends connected to it: what one server's own connections
 * cost, whatever else uses the PostgreSQL server meanwhile (a backend that ends takes its
 * CPU out of a sum over all processes).
 */
export const postgresCpuMillis = (database?: string): number => {
  let total = 0
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "postgres") continue
      // A backend's title: "postgres: <cluster>: <user> <database> <host>(<port>) <state>".
      if (database !== undefined && !readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(` ${database} `)) continue
    } catch {
      continue
    }
    total += cpuMillisOf(Number(entry)) ?? 0
  }
  return total
}

// ---------------------------------------------------------------------------------------
// Peak resident memory of another process (Linux /proc).

/**
 * Resets `pid`'s peak RSS (VmHWM) to its current RSS, so the next {@link peakRssBytes}
 * is the peak since now. False when the kernel or permissions do not allow it.
 */
export const resetPeakRss = (pid: number | undefined): boolean => {
  if (pid === undefined) return false
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}

/** VmHWM of `pid` in bytes, or undefined when /proc is not readable. */
export const peakRssBytes = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------------------
// Statistics

/** Nearest-rank percentile of an ascending-sorted array; NaN when empty. */
export const percentile = (sorted: ArrayLike<number>, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

export const sortedCopy = (values: ReadonlyArray<number>): Array<number> => [...values].sort((a, b) => a - b)

/** The middle value, or the mean of the two middle ones (with 2 passes: their mean, not the slower one). */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = sortedCopy(values)
  const middle = sorted.length >>> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

// ---------------------------------------------------------------------------------------
// Formatting

/** A number with a sensible number of significant digits for a table. */
export const fmt = (value: number | undefined, digits = 3): string => {
  if (value === undefined || Number.isNaN(value)) return "-"
  if (!Number.isFinite(value)) return "inf"
  const abs = Math.abs(value)
  if (abs >= 10 ** digits) return Math.round(value).toLocaleString("en-US")
  return Number(value.toPrecision(digits)).toString()
}

/** A cost ratio printed as "3.2x". */
export const fmtRatio = (value: number | undefined): string =>
  value === undefined || Number.isNaN(value) ? "-" : `${fmt(value, 2)}x`

/** Renders rows as an aligned text table (numbers right-aligned). */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)))
  const numeric = header.map((_, i) => rows.every((row) => /^[-+0-9.,x%inf ]*$/.test(row[i] ?? "")))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join("  ").trimEnd()
  const rule = widths.map((w) => "-".repeat(w)).join("  ")
  return [line(header), rule, ...rows.map(line)].join("\n")
}

/** Renders rows as a Markdown table. */
export const markdownTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((row) => /^[-+0-9.,x%inf ]*$/.test(row[i] ?? "")))
  const line = (cells: ReadonlyArray<string>) => `| ${cells.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`
  return [line(header), line(numeric.map((n) => (n ? "---:" : "---"))), ...rows.map(line)].join("\n")
}


/** Statuses cycled through by the generated pets: a quarter each, a quarter without status. */
export const STATUSES = ["available", "pending", "sold", undefined] as const

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Latency percentiles of a load run, in milliseconds. */
export interface LatencyMs {
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
  readonly mean: number
}
