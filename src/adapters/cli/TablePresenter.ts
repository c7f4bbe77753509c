import { Console, Effect } from "effect"

/**
 * Prints `rows` under `columns` as the commands' list output: each column as wide as its
 * widest cell, two spaces between columns, no trailing blanks.
 */
export const printTable = (columns: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  Effect.gen(function*() {
    const widths = columns.map((column, i) => Math.max(column.length, ...rows.map((row) => row[i]!.length)))
    for (const row of [columns, ...rows]) {
      yield* Console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd())
    }
  })
