/**
 * Where the suite's output goes: each line and table is printed as it comes and kept
 * for bench/results/latest.md, so the Markdown report says exactly what stdout said.
 */
import { markdownTable, table as textTable } from "./lib.ts"

export interface Report {
  readonly heading: (text: string) => void
  readonly say: (text: string) => void
  /** A caveat: printed, kept in the Markdown, and listed in latest.json. */
  readonly note: (text: string) => void
  readonly table: (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => void
  readonly notes: () => ReadonlyArray<string>
  readonly markdown: () => string
}

export const makeReport = (title: string): Report => {
  const markdown: Array<string> = [`# ${title}`, ""]
  const notes: Array<string> = []
  const print = (text: string) => process.stdout.write(`${text}\n`)
  return {
    heading: (text) => {
      print(`\n== ${text} ==`)
      markdown.push("", `## ${text}`, "")
    },
    say: (text) => {
      print(text)
      markdown.push(text.trim() === "" ? "" : `${text.trim()}  `)
    },
    note: (text) => {
      notes.push(text)
      print(`  note: ${text}`)
      markdown.push(`- note: ${text}`)
    },
    table: (header, rows) => {
      print("")
      print(textTable(header, rows))
      markdown.push("", markdownTable(header, rows), "")
    },
    notes: () => notes,
    markdown: () => `${markdown.join("\n").replace(/\n{3,}/g, "\n\n")}\n`
  }
}
