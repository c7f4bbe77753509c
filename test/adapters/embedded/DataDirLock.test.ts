/**
 * Who owns a DATA_DIR lock, against real processes: a live one holds it; a zombie (killed,
 * not yet reaped) or a live process given the owner's pid after it died does not.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import * as DataDirLock from "../../../src/adapters/embedded/DataDirLock.ts"
import { startTimeOf } from "../../../src/adapters/process/LiveProcess.ts"

const dirs: Array<string> = []
const children: Array<ChildProcess> = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL")
})
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

const freshDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-lock-"))
  dirs.push(dir)
  return dir
}

/** A data directory whose lock file holds `content`, as an earlier process left it. */
const lockedBy = (content: string) => {
  const dir = freshDir()
  Fs.writeFileSync(Path.join(dir, DataDirLock.lockFileName), content)
  return dir
}

const stateOf = (pid: number) => {
  const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
}

/** Runs `script` in sh; resolves with the first line it prints. */
const shell = (script: string) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn("sh", ["-c", script], { stdio: ["ignore", "pipe", "inherit"] })
    children.push(child)
    child.once("error", reject)
    child.stdout.setEncoding("utf8").once("data", (line: string) => resolve(line.trim()))
  })

/** A live process other than this one. */
const liveProcess = async () => Number(await shell("echo $$; exec sleep 60"))

/** A process that has exited and that its parent (a shell become `sleep`) never reaps. */
const zombie = async () => {
  const pid = Number(await shell("sleep 0 & echo $!; exec sleep 60"))
  for (let i = 0; stateOf(pid) !== "Z"; i++) {
    if (i > 500) throw new Error(`pid ${pid} is ${stateOf(pid)}, not a zombie`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return pid
}

const take = (dir: string) => {
  const state = DataDirLock.lock(dir)
  if (state._tag === "Acquired") DataDirLock.unlock(state.lockPath)
  return state
}

describe.skipIf(!Fs.existsSync("/proc/self/stat"))("DataDirLock", () => {
  it("writes this process's pid and start time, and removes them on unlock", () => {
    const dir = freshDir()
    const state = DataDirLock.lock(dir)
    expect(state._tag).toBe("Acquired")
    const lockPath = Path.join(dir, DataDirLock.lockFileName)
    expect(Fs.readFileSync(lockPath, "utf8")).toBe(`${process.pid} ${startTimeOf(process.pid)}\n`)
    DataDirLock.unlock(lockPath)
    expect(Fs.existsSync(lockPath)).toBe(false)
  })

  it("a live owner holds it, with its start time or in the older pid-only file", async () => {
    const pid = await liveProcess()
    expect(take(lockedBy(`${pid} ${startTimeOf(pid)}\n`))).toEqual({ _tag: "InUse", pid })
    expect(take(lockedBy(`${pid}\n`))).toEqual({ _tag: "InUse", pid })
  })

  it("a live process with the owner's pid but another start time (the pid reused) does not", async () => {
    const pid = await liveProcess()
    const otherStart = String(Number(startTimeOf(pid)) - 1)
    expect(take(lockedBy(`${pid} ${otherStart}\n`))._tag).toBe("Acquired")
  })

  it("a zombie owner does not, with its start time or in the older pid-only file", async () => {
    const pid = await zombie()
    const startTime = startTimeOf(pid)
    expect(startTime).toMatch(/^\d+$/)
    expect(take(lockedBy(`${pid} ${startTime}\n`))._tag).toBe("Acquired")
    expect(take(lockedBy(`${pid}\n`))._tag).toBe("Acquired")
    expect(stateOf(pid)).toBe("Z")
  })
})
