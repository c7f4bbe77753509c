/**
 * The service's log output: one JSON object per line on stdout, written in batches.
 * A write to stdout is a system call, and synchronous when stdout is a file or a pipe;
 * one per request line was a fifth of the CPU of a request. Lines are gathered for
 * {@link FLUSH_WINDOW} and written together, and what is pending is written when the
 * layer closes (every exit but SIGKILL).
 */
import { Effect, Logger } from "effect"

/** Longest a log line waits before it is written. */
export const FLUSH_WINDOW = "50 millis"

export const layer = Logger.layer([
  Logger.batched(Logger.formatJson, {
    window: FLUSH_WINDOW,
    flush: (lines) => Effect.sync(() => process.stdout.write(`${lines.join("\n")}\n`))
  })
])
