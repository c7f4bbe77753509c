/**
 * A real headless Chromium calls the real service from a page of another origin (two
 * local HTTP origins: the service's port and a page server's), as a browser client
 * would: CORS preflight, credentials in `Authorization`, reading exposed headers and
 * error bodies; and a page of an origin that is not allowed is refused by the browser.
 * And the docs page's "Test Request", clicked as a developer would, calls the service (an
 * upload of a file from its form too); the page itself asks no other host for anything.
 * Skipped, saying so, where no Chromium is installed; on CI (CI=true) that fails instead.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { jpeg } from "../adapters/images/TestImages.ts"
import { killAll, type ServiceProcess, startService } from "./ServiceProcess.ts"

const CHROMIUM = "/usr/bin/chromium"
const installed = existsSync(CHROMIUM)
const onCi = process.env["CI"] === "true"
const API_KEY = "browser-test-key"

if (!installed && !onCi) {
  console.warn(`SKIPPED: the browser tests need Chromium at ${CHROMIUM} (apt-get install -y chromium)`)
}

/** A page server on its own port: its own origin, serving one empty page. */
const pageServer = async (): Promise<{ readonly origin: string; readonly server: Server }> => {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>client</title>")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  return { origin: `http://127.0.0.1:${address.port}`, server }
}

describe.skipIf(!installed && !onCi)("a real browser", () => {
  let service: ServiceProcess
  let allowed: Awaited<ReturnType<typeof pageServer>>
  let refused: Awaited<ReturnType<typeof pageServer>>
  let context: BrowserContext
  let userDataDir: string

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `Chromium is required on CI: ${CHROMIUM} is missing`).toBe(true)
    allowed = await pageServer()
    refused = await pageServer()
    service = await startService({ env: { STORE: "memory", API_KEYS: API_KEY, CORS_ORIGINS: allowed.origin } })
    userDataDir = mkdtempSync(join(tmpdir(), "animal-store-chromium-"))
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
  }, 60_000)

  afterAll(async () => {
    await context?.close()
    allowed?.server.close()
    refused?.server.close()
    await killAll()
    if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true })
  })

  it("creates and lists pets with a bearer key, reading Location, Link and X-Request-Id, and a 401's body", async () => {
    const page = await context.newPage()
    await page.goto(allowed.origin)
    const seen = await page.evaluate(async ({ api, key }) => {
      const created = []
      for (const name of ["Rex", "Fido"]) {
        const response = await fetch(`${api}/v1/pets`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "idempotency-key": `browser-${name}`,
            "x-request-id": "browser-request-1"
          },
          body: JSON.stringify({ name, categoryId: 1, status: "available" })
        })
        created.push({
          status: response.status,
          location: response.headers.get("location"),
          requestId: response.headers.get("x-request-id"),
          body: await response.json()
        })
      }
      const page = await fetch(`${api}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } })
      const deprecated = await fetch(`${api}/v1/pets/1`, { headers: { authorization: `Bearer ${key}` } })
      const unauthorized = await fetch(`${api}/v1/pets`)
      return {
        created,
        link: page.headers.get("link"),
        sunset: deprecated.headers.get("sunset"),
        deprecation: deprecated.headers.get("deprecation"),
        unauthorized: { status: unauthorized.status, body: await unauthorized.json() }
      }
    }, { api: service.baseUrl, key: API_KEY })
    await page.close()

    expect(seen.created.map((c) => [c.status, c.location, c.requestId])).toEqual([
      [201, "/v1/pets/1", "browser-request-1"],
      [201, "/v1/pets/2", "browser-request-1"]
    ])
    expect(seen.created[0]?.body).toEqual({ id: 1, name: "Rex", categoryId: 1, status: "available", tags: [], version: 1 })
    expect(seen.link).toMatch(/^<\/v1\/pets\?limit=1&cursor=[\w-]+>; rel="next"$/)
    expect(seen.deprecation).toMatch(/^@\d+$/)
    expect(seen.sunset).toBe("Thu, 05 Dec 2030 00:00:00 GMT")
    expect(seen.unauthorized).toEqual({ status: 401, body: expect.objectContaining({ code: "unauthorized", status: 401 }) })
  }, 30_000)

  it("is refused by the browser when its origin is not in CORS_ORIGINS", async () => {
    const page = await context.newPage()
    await page.goto(refused.origin)
    const outcome = await page.evaluate(async ({ api, key }) => {
      try {
        const response = await fetch(`${api}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
        return `answered ${response.status}`
      } catch (error) {
        return `refused: ${String(error)}`
      }
    }, { api: service.baseUrl, key: API_KEY })
    await page.close()
    expect(outcome).toMatch(/^refused: TypeError/)
  }, 30_000)

  it("/docs loads nothing from any other host: it works offline (no fonts or scripts from a CDN)", async () => {
    const page = await context.newPage()
    const requested: Array<string> = []
    const elsewhere: Array<string> = []
    // Every request is recorded; one to another host is refused at once (as offline), so the
    // page settles instead of waiting for a host this machine may not reach.
    await page.route("**/*", (route) => {
      const url = route.request().url()
      requested.push(url)
      if (new URL(url).origin === service.baseUrl) return route.continue()
      elsewhere.push(url)
      return route.abort("internetdisconnected")
    })
    await page.goto(`${service.baseUrl}/docs`)
    // Rendered, with the fonts its text asks for requested by now.
    await page.getByRole("button", { name: /Test Request.*get \/pets\)/ }).first().waitFor()
    await page.evaluate("document.fonts.ready.then(() => undefined)")
    await page.close()
    expect(requested.length).toBeGreaterThan(0)
    expect(elsewhere).toEqual([])
  }, 60_000)

  it("/docs: Test Request calls the very service that served the page, with the bearer key, and gets 200", async () => {
    const page = await context.newPage()
    await page.goto(`${service.baseUrl}/docs`)
    await page.getByRole("button", { name: /Test Request.*get \/pets\)/ }).first().click()
    await page.getByPlaceholder("Token").first().fill(API_KEY)
    const [response] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === "/v1/pets" && r.request().method() === "GET"),
      page.getByRole("button", { name: /^Send get request/ }).first().click()
    ])
    const sent = await response.request().allHeaders()
    await page.close()
    expect(response.url().startsWith(`${service.baseUrl}/v1/pets`)).toBe(true)
    expect(sent["authorization"]).toBe(`Bearer ${API_KEY}`)
    expect(response.status()).toBe(200)
  }, 30_000)

  it("/docs: the response pane shows an integer above 2^53 as the body has it, not rounded", async () => {
    const created = await fetch(`${service.baseUrl}/v1/pets`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json", "idempotency-key": "browser-big" },
      body: `{"name":"Big","categoryId":9007199254740993,"status":"available"}`
    })
    expect(await created.text()).toContain(`"categoryId":9007199254740993`)
    const page = await context.newPage()
    await page.goto(`${service.baseUrl}/docs`)
    await page.getByRole("button", { name: /Test Request.*get \/pets\)/ }).first().click()
    await page.getByPlaceholder("Token").first().fill(API_KEY)
    await page.getByRole("button", { name: /^Send get request/ }).first().click()
    // The response pane's text (Scalar's ResponseBodyRaw, a read-only CodeMirror), once it shows the list.
    const pane = page.locator(".body-raw .cm-content", { hasText: "Big" }).first()
    const shown = await pane.innerText()
    await page.close()
    expect(shown).toContain(`"categoryId": 9007199254740993`)
  }, 60_000)

  // Longer: alone, its first /docs load reads the 3 MB script, tens of seconds on a loaded machine.
  it("/docs: an upload is tried from the page's form, a file in a multipart part, and its signed URL shows in an <img>", async () => {
    const pet = await fetch(`${service.baseUrl}/v1/pets`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: `{"name":"Tabby","categoryId":1}`
    }).then((answer) => answer.json() as Promise<{ readonly id: number }>)
    const page = await context.newPage()
    await page.goto(`${service.baseUrl}/docs`)
    // The photos group is folded: open it, then the upload's own section.
    await page.getByRole("button", { name: "Open Group photos" }).first().click()
    await page.locator("a").filter({ hasText: /^\s*post\s*\/pets\/\{petId\}\/photos\s*$/ }).first().click()
    await page.getByRole("button", { name: /Test Request.*post \/pets\/\{petId\}\/photos\)/ }).first().click()
    await page.getByPlaceholder("Token").first().fill(API_KEY)
    await page.locator("[contenteditable=true]:right-of(:text('petId'))").first().click()
    await page.keyboard.type(String(pet.id))
    // The body as a browser form sends it.
    await page.getByRole("button", { name: "image/jpeg", exact: true }).first().click()
    await page.getByRole("option", { name: "Multipart Form" }).click()
    const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.getByRole("button", { name: /Select File/ }).click()])
    // The page names the form's part after the file chosen, and the service takes the part
    // named "file": a file of that name (a user renames the part in the page instead, an
    // edit in a field that typing into from here did not always reach).
    await chooser.setFiles({ name: "file", mimeType: "image/jpeg", buffer: await jpeg() })
    const [response] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === `/v1/pets/${pet.id}/photos` && r.request().method() === "POST"),
      page.getByRole("button", { name: /^Send post request/ }).first().click()
    ])
    const sent = await response.request().allHeaders()
    expect(sent["content-type"]).toMatch(/^multipart\/form-data; boundary=/)
    expect(sent["authorization"]).toBe(`Bearer ${API_KEY}`)
    expect(response.status(), await response.text()).toBe(201)
    const photo = (await response.json()) as { readonly width: number; readonly urls: { readonly thumb: string } }
    expect(photo.width).toBe(300)
    // An <img> sends no key: the signed URL alone gets the thumb, which the browser decodes.
    const src = JSON.stringify(`${service.baseUrl}${photo.urls.thumb}`)
    // A string, as the page's own code: the tests' TypeScript has no DOM types.
    const shown = await page.evaluate(`(async () => {
      const image = new Image()
      image.src = ${src}
      await image.decode()
      return { width: image.naturalWidth, height: image.naturalHeight }
    })()`)
    await page.close()
    expect(shown).toEqual({ width: 256, height: 171 })
  }, 120_000)
})
