/**
 * The relative links of Markdown files, checked as GitHub renders them: each must name a
 * file or folder that exists, and a `#fragment` must name a heading of its target (or of
 * the file itself), by GitHub's slugs. Links in fenced code blocks are code, not links;
 * absolute URLs are not followed.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

/** The text of a Markdown file outside its fenced code blocks, line by line. */
const proseLines = (markdown: string): Array<string> => {
  let fence: string | undefined
  const lines: Array<string> = []
  for (const line of markdown.split("\n")) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === undefined && opening !== undefined) fence = opening
    else if (fence !== undefined && line.trim().startsWith(fence)) fence = undefined
    else if (fence === undefined) lines.push(line)
  }
  return lines
}

/** The targets of the inline links `[text](target)` and images, in order. */
export const linkTargets = (markdown: string): Array<string> =>
  proseLines(markdown)
    // Inline code may show link syntax without being a link.
    .map((line) => line.replace(/`[^`]*`/g, ""))
    .flatMap((line) => [...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!))

/** GitHub's anchor for a heading's text: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
export const slugOf = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-")

/** The anchors a Markdown file's headings get, a repeated one numbered as GitHub numbers it. */
export const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const slug = slugOf(heading)
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

const isAbsolute = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")

/** Every relative link of `file` that does not resolve, as `file: target (why)`. */
export const brokenLinks = (file: string): Array<string> => {
  const markdown = Fs.readFileSync(file, "utf8")
  const problems: Array<string> = []
  for (const target of linkTargets(markdown)) {
    if (isAbsolute(target)) continue
    const [pathPart = "", fragment] = target.split("#", 2)
    const resolved = pathPart === "" ? file : Path.resolve(Path.dirname(file), decodeURIComponent(pathPart))
    if (!Fs.existsSync(resolved)) {
      problems.push(`${file}: ${target} (no such file)`)
      continue
    }
    if (fragment === undefined || fragment === "") continue
    if (!resolved.endsWith(".md")) {
      problems.push(`${file}: ${target} (a fragment on a file that is not Markdown)`)
      continue
    }
    const anchors = anchorsOf(Fs.readFileSync(resolved, "utf8"))
    if (!anchors.has(decodeURIComponent(fragment))) problems.push(`${file}: ${target} (no such heading)`)
  }
  return problems
}
