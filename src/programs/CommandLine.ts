/**
 * The `animal-store` command line (effect/cli): `serve`, `migrate`, `keys` and
 * `webhooks`, each its program's command, with `--help` and `--version`. main.ts loads it
 * for every invocation but a bare `animal-store serve`, which starts the service without
 * parsing anything. The service's own modules are loaded only when `serve` runs.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Effect, Exit } from "effect"
import { CliError, Command } from "effect/cli"
import * as UsagePresenter from "../adapters/cli/UsagePresenter.ts"
import * as FailureReport from "./FailureReport.ts"
import * as KeysProgram from "./KeysProgram.ts"
import * as MigrateProgram from "./MigrateProgram.ts"
import * as PackageVersion from "./PackageVersion.ts"
import * as WebhooksProgram from "./WebhooksProgram.ts"

/** How a subcommand's program ends: the prefix of its failure's line, and whether an interruption is a clean stop. */
interface Ending {
  readonly prefix: string
  readonly interruptIsClean: boolean
}

// The program running, set as its subcommand starts; before that, a failure is the
// command line's own. Usage errors are already printed, one line each, by the presenter.
let ending: Ending = { prefix: "animal-store", interruptIsClean: false }
const endsAs = (end: Ending) =>
<const Name extends string, Input, ContextInput, E, R>(
  self: Command.Command<Name, Input, ContextInput, E, R>
): Command.Command<Name, Input, ContextInput, E, R> => Command.provideEffectDiscard(self, Effect.sync(() => void (ending = end)))
const command = (name: string): Ending => ({ prefix: `animal-store ${name}`, interruptIsClean: false })

const serve = Command.make("serve", {}, () =>
  Effect.flatMap(
    Effect.promise(() => import("./ServiceProgram.ts")),
    (ServiceProgram) => ServiceProgram.program(undefined)
  )).pipe(
    Command.withDescription(
      "Serve the HTTP API on the configured store until SIGTERM or SIGINT (every setting from the environment: " +
        "PORT, HOST, STORE, DATA_DIR, DATABASE_URL, API_KEYS … see the README's Configuration)"
    ),
    // SIGTERM/SIGINT interrupt the server, which stops accepting and drains: a clean exit.
    endsAs({ prefix: FailureReport.SERVICE_STOPPED, interruptIsClean: true })
  )

const root = Command.make("animal-store").pipe(
  Command.withDescription(
    "Animal Store: the service and its commands, on the store the environment configures " +
      "(STORE, DATABASE_URL, DATA_DIR; ./.env is read when it exists)"
  ),
  Command.withSubcommands([
    serve,
    MigrateProgram.command.pipe(endsAs(command("migrate"))),
    KeysProgram.command.pipe(endsAs(command("keys"))),
    WebhooksProgram.command.pipe(endsAs(command("webhooks")))
  ])
)

/** Runs the command line on the process's arguments as its main program. */
export const run = (): void =>
  NodeRuntime.runMain(
    Command.run(root, { version: PackageVersion.version }).pipe(
      Effect.tapCause((cause) => FailureReport.report(ending.prefix, CliError.isCliError)(cause)),
      Effect.provide([UsagePresenter.layer, NodeServices.layer])
    ),
    {
      disableErrorReporting: true,
      teardown: (exit, onExit) =>
        onExit(Exit.isSuccess(exit) || (ending.interruptIsClean && Cause.hasInterruptsOnly(exit.cause)) ? 0 : 1)
    }
  )
