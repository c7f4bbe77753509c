/**
 * A command run in a process group of its own (`npm start`, `npm run dev`), whose whole
 * tree is ended with it: npm, the shell it starts and node under them, and node's
 * `--watch` child. Ended at the latest by {@link stopAllGroups} after each test.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { sleep } from "./ServiceProcess.ts"

const groups = new Set<ProcessGroup>()

export class ProcessGroup {
  readonly child: ChildProcess
  stdout = ""
  stderr = ""
  #exit: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  #exited = false

  constructor(command: string, args: ReadonlyArray<string>, options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv }) {
    this.child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] })
    this.child.stdout!.setEncoding("utf8").on("data", (chunk: string) => this.stdout += chunk)
    this.child.stderr!.setEncoding("utf8").on("data", (chunk: string) => this.stderr += chunk)
    this.#exit = new Promise((resolve) =>
      this.child.once("exit", (code, signal) => {
        this.#exited = true
        resolve({ code, signal })
      })
    )
    groups.add(this)
  }

  get output(): string {
    return `--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`
  }

  /** Resolves once `predicate` holds; rejects when the leader exits first or after `timeoutMs`. */
  async waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate()) {
      if (this.#exited) throw new Error(`exited before ${what}\n${this.output}`)
      if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms\n${this.output}`)
      await sleep(50)
    }
  }

  /** Sends `signal` to the whole group; SIGKILL to it after `timeoutMs`. How the leader exited. */
  async stop(
    signal: NodeJS.Signals = "SIGTERM",
    timeoutMs = 10_000
  ): Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }> {
    this.#signal(signal)
    const deadline = Date.now() + timeoutMs
    const timer = setTimeout(() => this.#signal("SIGKILL"), timeoutMs)
    try {
      const exit = await this.#exit
      // The leader (npm) may end before its children have: they are given the rest of the time.
      while (this.#alive() && Date.now() < deadline) await sleep(50)
      this.#signal("SIGKILL")
      return exit
    } finally {
      clearTimeout(timer)
      groups.delete(this)
    }
  }

  #alive(): boolean {
    try {
      process.kill(-this.child.pid!, 0)
      return true
    } catch {
      return false
    }
  }

  #signal(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.child.pid!, signal)
    } catch {
      // the group is gone
    }
  }
}

/** Ends every group still running: for `afterEach`. */
export const stopAllGroups = async (): Promise<void> => {
  await Promise.all([...groups].map((group) => group.stop("SIGKILL", 2_000)))
}
