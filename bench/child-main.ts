/**
 * How a bench child process (one adapter's measurement, spawned by run.ts) ends: exit 0,
 * or exit 1 with its cause on stderr under `label`, which the parent shows.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, type Effect, Exit } from "effect"

export const runChildMain = (label: string, main: Effect.Effect<unknown, unknown>): void =>
  NodeRuntime.runMain(main, {
    disableErrorReporting: true,
    teardown: (exit, onExit) => {
      if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
        process.stderr.write(`${label} failed:\n${Cause.pretty(exit.cause)}\n`)
        onExit(1)
      } else onExit(0)
    }
  })
