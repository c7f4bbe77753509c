/**
 * How the command shows a usage error: each error on one line of stderr, naming the
 * command and where its help is, instead of the whole help before the one line that
 * matters. Help asked for, and the version, are shown as effect/cli shows them.
 */
import { Console, Effect, Layer } from "effect"
import { CliOutput } from "effect/cli"

export const presenter: CliOutput.Presenter = {
  present: (event) =>
    event._tag === "InvalidInvocation"
      ? Effect.forEach(event.errors, (error) => {
        const command = event.commandPath.join(" ")
        return Console.error(`${command}: ${error.message} (see ${command} --help)`)
      }, { discard: true })
      : CliOutput.defaultPresenter.present(event)
}

/** The presenter, for `Command.run`. */
export const layer: Layer.Layer<never> = CliOutput.layerPresenter(presenter)
