/**
 * The served OpenAPI document through the two common linters, each with its standard
 * ruleset: Spectral (`spectral:oas`) and Redocly (`recommended`). Any error or warning
 * fails, with the linters' own messages.
 */
import { createConfig, lintFromString } from "@redocly/openapi-core"
import { Document, Spectral } from "@stoplight/spectral-core"
import * as Parsers from "@stoplight/spectral-parsers"
import { oas } from "@stoplight/spectral-rulesets"
import { beforeAll, describe, expect, it } from "vitest"
import { makeTestServer } from "./TestServer.ts"

let source: string

const spectralProblems = async (text: string) => {
  const spectral = new Spectral()
  spectral.setRuleset({ extends: [[oas as never, "recommended"]] })
  const results = await spectral.run(new Document(text, Parsers.Json, "openapi.json"))
  return results.map((result) =>
    `${result.code} at ${result.path.join(".")} (line ${result.range.start.line + 1}): ${result.message}`
  )
}

const redoclyProblems = async (text: string) => {
  const config = await createConfig({ extends: ["recommended"] })
  const problems = await lintFromString({ source: text, absoluteRef: "openapi.json", config })
  return problems.map((problem) =>
    `${problem.ruleId} (${problem.severity}) at ${problem.location.map((l) => l.pointer).join(", ")}: ${problem.message}`
  )
}

// A copy of the document with an example that breaks its own schema, and an operation without a description.
const broken = () => {
  const doc = JSON.parse(source)
  doc.paths["/pets"].post.requestBody.content["application/json"].example = { name: 42 }
  delete doc.paths["/pets"].get.description
  return JSON.stringify(doc, null, 2)
}

beforeAll(async () => {
  const server = makeTestServer()
  const result = await server.call("GET", "/v1/openapi.json")
  await server.dispose()
  expect(result.status).toBe(200)
  // Pretty-printed so that the linters' line numbers point somewhere readable.
  source = JSON.stringify(JSON.parse(result.text), null, 2)
})

describe("the OpenAPI document, linted", () => {
  it("Spectral with spectral:oas reports no errors, warnings, information or hints", async () => {
    expect(await spectralProblems(source)).toEqual([])
  }, 30_000)

  it("Redocly with the recommended ruleset reports no errors or warnings", async () => {
    expect(await redoclyProblems(source)).toEqual([])
  }, 30_000)

  it("both linters do catch a bad example (and Spectral a missing description) in a broken copy", async () => {
    const text = broken()
    const spectral = await spectralProblems(text)
    expect(spectral.some((problem) => problem.startsWith("oas3-valid-media-example"))).toBe(true)
    expect(spectral.some((problem) => problem.startsWith("operation-description"))).toBe(true)
    expect((await redoclyProblems(text)).some((problem) => problem.startsWith("no-invalid-media-type-examples"))).toBe(true)
  }, 30_000)
})
