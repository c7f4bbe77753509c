import { randomBytes } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import { issueSecret } from "../../../src/application/webhooks/SecretIssuer.ts"
import { signatureHeaders } from "../../../src/application/webhooks/WebhookSignature.ts"
import { formatSecret } from "../../../src/domain/webhooks/WebhookSecret.ts"

const now = () => Math.floor(Date.now() / 1000)
const body = JSON.stringify({ type: "pet.created", data: { id: "9007199254740993", name: "Rex ✓" } })

describe("signatureHeaders", () => {
  it("signs so that the standardwebhooks package verifies the delivery", () => {
    const secret = issueSecret()
    const headers = signatureHeaders({ id: "evt_1", timestamp: now(), body }, [secret])
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body))
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
  })

  it("matches the package's own signature for the same message, for secrets of 24 and 64 bytes", () => {
    for (const size of [24, 64]) {
      const secret = formatSecret(randomBytes(size))
      const timestamp = now()
      const headers = signatureHeaders({ id: "evt_2", timestamp, body }, [secret])
      expect(headers["webhook-signature"]).toBe(new Webhook(secret).sign("evt_2", new Date(timestamp * 1000), body))
    }
  })

  it("during a rotation's overlap carries one signature per secret: either secret verifies", () => {
    const [current, previous] = [issueSecret(), issueSecret()]
    const headers = signatureHeaders({ id: "evt_3", timestamp: now(), body }, [current, previous])
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2)
    expect(new Webhook(current).verify(body, { ...headers })).toEqual(JSON.parse(body))
    expect(new Webhook(previous).verify(body, { ...headers })).toEqual(JSON.parse(body))
    // A secret that never signed it does not verify.
    expect(() => new Webhook(issueSecret()).verify(body, { ...headers })).toThrow(/signature/i)
  })

  it("a changed body, id or timestamp does not verify", () => {
    const secret = issueSecret()
    const timestamp = now()
    const headers = signatureHeaders({ id: "evt_4", timestamp, body }, [secret])
    const webhook = new Webhook(secret)
    expect(() => webhook.verify(body.replace("Rex", "Tom"), { ...headers })).toThrow()
    expect(() => webhook.verify(body, { ...headers, "webhook-id": "evt_5" })).toThrow()
    expect(() => webhook.verify(body, { ...headers, "webhook-timestamp": String(timestamp - 1) })).toThrow()
  })
})
