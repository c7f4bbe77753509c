/**
 * Preloaded into a service process (`NODE_OPTIONS=--import=<this file>`) with
 * `MODULE_LOG` naming a file: appends the URL of every module the process loads, as it
 * loads it, so that a test can see what a store mode brings into memory and when.
 */
import { appendFileSync } from "node:fs"
import { registerHooks } from "node:module"

const logPath = process.env["MODULE_LOG"]
if (logPath !== undefined) {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(logPath, `${url}\n`)
      return nextLoad(url, context)
    }
  })
}
