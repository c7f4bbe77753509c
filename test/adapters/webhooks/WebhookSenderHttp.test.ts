import { Duration, Effect, Fiber } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import { afterEach, describe, expect, it } from "vitest"
import { issueSecret } from "../../../src/application/webhooks/SecretIssuer.ts"
import type { WebhookUrl } from "../../../src/domain/webhooks/WebhookUrl.ts"
import { ANSWER_BYTES_MAX, make, type Resolver } from "../../../src/adapters/webhooks/WebhookSenderHttp.ts"

interface Received {
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

const servers: Array<Server> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  ))
})

// A real local HTTP server answering each request with `answer`; it records what it received.
const serve = async (answer: (request: IncomingMessage, response: ServerResponse) => void) => {
  const received: Array<Received> = []
  const server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => (body += chunk))
    request.on("end", () => {
      received.push({ headers: request.headers, body })
      answer(request, response)
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return { received, port, url: `http://127.0.0.1:${port}/hook` as WebhookUrl }
}

const body = JSON.stringify({ type: "pet.created", data: { id: "1", name: "Rex" } })
const secret = issueSecret()
const delivery = (url: string) => ({ url: url as WebhookUrl, messageId: "evt_1", body, secrets: [secret] })
const open = make({ allowPrivate: true })
const send = (url: string, sender = open) => Effect.runPromise(sender.send(delivery(url)))
const status = (code: number, text = "") => (_: IncomingMessage, response: ServerResponse) => response.writeHead(code).end(text)
// A resolver that knows the names a test gives it, and counts its calls.
const resolver = (...answers: Array<ReadonlyArray<string>>) => {
  let calls = 0
  const resolve: Resolver = async () => {
    const addresses = answers[Math.min(calls++, answers.length - 1)]!
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
  }
  return { resolve, calls: () => calls }
}

describe("WebhookSenderHttp.send", () => {
  it("POSTs the JSON body signed the Standard Webhooks way: a 2xx is delivered", async () => {
    const server = await serve(status(204))
    const result = await send(server.url)
    expect(result).toMatchObject({ outcome: "delivered", httpStatus: 204, error: undefined })
    expect(result.durationMs).toBeGreaterThanOrEqual(0)
    const [request] = server.received
    expect(request!.body).toBe(body)
    expect(request!.headers["content-type"]).toBe("application/json")
    expect(request!.headers["webhook-id"]).toBe("evt_1")
    const headers = Object.fromEntries(
      ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => [name, String(request!.headers[name])])
    )
    expect(new Webhook(secret).verify(request!.body, headers)).toEqual(JSON.parse(body))
  })

  it("410 is gone; any other status is a retry, with the status", async () => {
    expect(await send((await serve(status(410))).url)).toMatchObject({ outcome: "gone", httpStatus: 410 })
    expect(await send((await serve(status(503, "busy"))).url)).toMatchObject({
      outcome: "retry",
      httpStatus: 503,
      error: "503 Service Unavailable"
    })
    expect(await send((await serve(status(400))).url)).toMatchObject({ outcome: "retry", httpStatus: 400 })
  })

  it("does not follow a redirect: a 3xx is a retry and its target is never asked", async () => {
    const target = await serve(status(200))
    const redirecting = await serve((_, response) => response.writeHead(307, { location: target.url }).end())
    expect(await send(redirecting.url)).toMatchObject({ outcome: "retry", httpStatus: 307, error: "307 redirect, not followed" })
    expect(target.received).toHaveLength(0)
  })

  it("a receiver that does not answer in time is a retry at the deadline, the answer's body included", async () => {
    const quick = make({ allowPrivate: true, timeout: Duration.millis(300) })
    const silent = await serve(() => {})
    expect(await send(silent.url, quick)).toMatchObject({ outcome: "retry", httpStatus: undefined, error: "no complete answer within 300ms" })
    // The status came, the body never ends.
    const dribbling = await serve((_, response) => {
      response.writeHead(200)
      response.write("x")
    })
    expect(await send(dribbling.url, quick)).toMatchObject({ outcome: "retry", error: "no complete answer within 300ms" })
  })

  it("an interrupted send (a shutdown) closes its connection at once, not at the deadline", async () => {
    let closed: Promise<number> | undefined
    const hanging = await serve((request) => {
      closed = new Promise((resolve) => request.socket.once("close", () => resolve(performance.now())))
    })
    const fiber = Effect.runFork(open.send(delivery(hanging.url)))
    while (closed === undefined) await new Promise((resolve) => setTimeout(resolve, 10))
    const interruptedAt = performance.now()
    await Effect.runPromise(Fiber.interrupt(fiber))
    // The deadline is 5 s; the receiver sees the connection go well before.
    expect(await closed - interruptedAt).toBeLessThan(1_000)
  })

  it("reads an answer's body only up to the cap, then drops it", async () => {
    let written = 0
    const endless = await serve((_, response) => {
      response.writeHead(200)
      const more = () => {
        while (written < 64 * ANSWER_BYTES_MAX) {
          written += 16 * 1024
          if (!response.write(Buffer.alloc(16 * 1024))) return void response.once("drain", more)
        }
        response.end()
      }
      response.on("error", () => {})
      more()
    })
    expect(await send(endless.url)).toMatchObject({ outcome: "delivered", httpStatus: 200 })
    expect(written).toBeLessThan(64 * ANSWER_BYTES_MAX)
  })

  it("a network error is a retry", async () => {
    const { port } = await serve(status(200))
    await new Promise<void>((resolve) => servers.pop()!.close(() => resolve()))
    expect(await send(`http://127.0.0.1:${port}/hook`)).toMatchObject({ outcome: "retry", httpStatus: undefined })
  })

  it("connects to the address it resolved and checked, whatever the system resolver says of the name", async () => {
    const server = await serve(status(200))
    const sender = make({ allowPrivate: true, resolve: resolver(["127.0.0.1"]).resolve })
    expect(await send(`http://receiver.invalid:${server.port}/hook`, sender)).toMatchObject({ outcome: "delivered" })
    expect(server.received[0]!.headers.host).toBe(`receiver.invalid:${server.port}`)
  })

  it("without WEBHOOK_ALLOW_PRIVATE refuses, at delivery, a name that now resolves to a private address (DNS rebinding): gone, with the reason", async () => {
    const server = await serve(status(200))
    // Public when subscribed, loopback when delivered.
    const dns = resolver(["93.184.215.14"], ["127.0.0.1"])
    const strict = make({ allowPrivate: false, resolve: dns.resolve })
    expect(await Effect.runPromise(strict.check(`https://receiver.example:${server.port}/hook`))).toBe(
      `https://receiver.example:${server.port}/hook`
    )
    const result = await Effect.runPromise(strict.send(delivery(`https://receiver.example:${server.port}/hook`)))
    // Refused is final: retrying for 24 hours would meet the same refusal.
    expect(result).toMatchObject({
      outcome: "gone",
      httpStatus: undefined,
      error: "receiver.example resolves to 127.0.0.1, a loopback address"
    })
    expect(dns.calls()).toBe(2)
    expect(server.received).toHaveLength(0)
  })

  it("a name with one refused address among public ones is gone at delivery", async () => {
    const server = await serve(status(200))
    const strict = make({ allowPrivate: false, resolve: resolver(["93.184.215.14", "10.1.2.3"]).resolve })
    expect(await send(`https://receiver.example:${server.port}/hook`, strict)).toMatchObject({
      outcome: "gone",
      httpStatus: undefined,
      error: "receiver.example resolves to 10.1.2.3, a private address"
    })
    expect(server.received).toHaveLength(0)
  })

  it("without WEBHOOK_ALLOW_PRIVATE refuses plain http and IP literals of refused kinds at delivery too: gone (the setting was turned off since)", async () => {
    const server = await serve(status(200))
    const strict = make({ allowPrivate: false })
    expect(await send(server.url, strict)).toMatchObject({
      outcome: "gone",
      httpStatus: undefined,
      error: "the URL must be an https URL"
    })
    expect(await send(`https://[::ffff:127.0.0.1]:${server.port}/`, strict)).toMatchObject({
      outcome: "gone",
      httpStatus: undefined,
      error: "the URL must not point at a loopback address"
    })
    expect(server.received).toHaveLength(0)
  })

  it("a name that resolves to no address, or does not resolve, is a retry: DNS may answer again", async () => {
    const strict = make({ allowPrivate: false, resolve: resolver([]).resolve })
    expect(await send("https://receiver.example/hook", strict)).toMatchObject({
      outcome: "retry",
      httpStatus: undefined,
      error: "receiver.example has no address"
    })
    const failing = make({
      allowPrivate: false,
      resolve: () => Promise.reject(new Error("queryA ESERVFAIL receiver.example"))
    })
    expect(await send("https://receiver.example/hook", failing)).toMatchObject({
      outcome: "retry",
      httpStatus: undefined,
      error: "queryA ESERVFAIL receiver.example"
    })
  })
})

describe("WebhookSenderHttp.check", () => {
  const checked = (url: string, addresses: ReadonlyArray<string>, allowPrivate = false) =>
    Effect.runPromise(Effect.flip(make({ allowPrivate, resolve: resolver(addresses).resolve }).check(url))).then(
      (error) => error.message,
      () => "accepted"
    )

  it("refuses a host with any address of a refused kind, and explains which", async () => {
    expect(await checked("https://hooks.example/", ["10.0.0.7"])).toBe(
      "url: hooks.example resolves to 10.0.0.7, a private address"
    )
    expect(await checked("https://hooks.example/", ["93.184.215.14", "fd12::1"])).toBe(
      "url: hooks.example resolves to fd12::1, a unique-local address"
    )
    expect(await checked("https://hooks.example/", ["::ffff:169.254.169.254"])).toBe(
      "url: hooks.example resolves to ::ffff:169.254.169.254, a link-local address"
    )
    expect(await checked("https://hooks.example/", ["93.184.215.14"])).toBe("accepted")
    expect(await checked("http://hooks.example/", ["10.0.0.7"], true)).toBe("accepted")
  })

  it("refuses the URL rules' failures and a host that does not resolve", async () => {
    expect(await checked("http://hooks.example/", ["93.184.215.14"])).toBe("url: must be an https URL")
    expect(await checked("https://hooks.example/", [])).toBe(
      "url: hooks.example has no address"
    )
    expect(
      await Effect.runPromise(Effect.flip(make({ allowPrivate: false }).check("https://no-such-host.invalid/"))).then((error) => error.message)
    ).toBe("url: the host no-such-host.invalid could not be resolved")
  })
})
