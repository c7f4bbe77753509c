/**
 * The README is the front door and docs/ holds the rest: every relative link between
 * them, and into the code, must lead somewhere, so that a moved file or a renamed
 * heading fails here instead of in a reader's browser.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { anchorsOf, brokenLinks, linkTargets, slugOf } from "./MarkdownLinks.ts"

const repo = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..")

const markdownUnder = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    return entry.isDirectory() ? markdownUnder(path) : entry.name.endsWith(".md") ? [path] : []
  })

const documents = [Path.join(repo, "README.md"), Path.join(repo, "CHANGELOG.md"), ...markdownUnder(Path.join(repo, "docs"))]

describe("links in README.md, CHANGELOG.md and docs/", () => {
  it("every relative link names an existing file, and every fragment a heading of it", () => {
    expect(documents.length).toBeGreaterThan(3)
    expect(documents.flatMap(brokenLinks)).toEqual([])
  })

  it("the README links into docs/ (the checked files are the ones a reader follows)", () => {
    const readme = Fs.readFileSync(Path.join(repo, "README.md"), "utf8")
    expect(linkTargets(readme).filter((target) => target.startsWith("docs/")).length).toBeGreaterThan(5)
  })
})

describe("the link check itself", () => {
  it("finds a planted missing file, a planted missing heading, and accepts what exists", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-links-"))
    try {
      Fs.writeFileSync(Path.join(dir, "target.md"), "# Target\n\n## Rate limits\n\n## `--no-maglev` and the other flags\n\n## Rate limits\n")
      Fs.writeFileSync(Path.join(dir, "page.md"), [
        "# Page",
        "[ok](target.md) [ok](target.md#rate-limits) [ok](target.md#rate-limits-1) [ok](#page)",
        "[ok](target.md#--no-maglev-and-the-other-flags) [web](https://example.com/x#y)",
        "[gone](missing.md) [no heading](target.md#rate-limit) [no own heading](#nowhere)",
        "`[not a link](missing-in-code.md)`",
        "```md",
        "[in a fence](missing-in-fence.md)",
        "```"
      ].join("\n"))
      const page = Path.join(dir, "page.md")
      expect(brokenLinks(page)).toEqual([
        `${page}: missing.md (no such file)`,
        `${page}: target.md#rate-limit (no such heading)`,
        `${page}: #nowhere (no such heading)`
      ])
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("makes GitHub's anchors", () => {
    expect(slugOf("Reliability (measured)")).toBe("reliability-measured")
    expect(slugOf("`--no-maglev`: V8's mid-tier compiler off")).toBe("--no-maglev-v8s-mid-tier-compiler-off")
    expect([...anchorsOf("# A\n## B c\n## B c\n```\n# not a heading\n```\n")]).toEqual(["a", "b-c", "b-c-1"])
  })
})
