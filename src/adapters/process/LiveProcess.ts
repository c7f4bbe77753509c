import * as Fs from "node:fs"

/**
 * A process's state letter and start time (clock ticks since boot) from `/proc/<pid>/stat`,
 * or undefined where that cannot be read (no /proc, as on macOS, or no such process).
 */
const procStat = (pid: number): { readonly state: string; readonly startTime: string } | undefined => {
  let stat: string
  try {
    stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return undefined
  }
  // The command name (field 2) is in parentheses and may hold spaces and ")": fields 3 on follow the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const state = fields[0]
  const startTime = fields[19]
  return state === undefined || startTime === undefined ? undefined : { state, startTime }
}

/**
 * When a process started, in clock ticks since boot: with its pid, it names one process,
 * never a later one given the same pid. Undefined where /proc cannot tell (macOS).
 */
export const startTimeOf = (pid: number): string | undefined => procStat(pid)?.startTime

/**
 * Whether a process id names a process that is still running (a lock or admin file's
 * owner). A zombie (killed, not yet reaped by its parent) is not running, nor is a
 * process whose start time differs from `startTime`, when given: its pid was reused.
 * Where /proc cannot tell, `kill(pid, 0)`, which a zombie and a reused pid both pass.
 */
export const isAlive = (pid: number, startTime?: string): boolean => {
  const stat = procStat(pid)
  if (stat !== undefined) {
    return stat.state !== "Z" && stat.state !== "X" && (startTime === undefined || stat.startTime === startTime)
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
