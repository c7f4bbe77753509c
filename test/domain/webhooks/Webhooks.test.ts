import { DateTime, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { parseAddress, refusedAddress } from "../../../src/domain/webhooks/WebhookAddress.ts"
import { nextAttemptAt, RETRY_WINDOW } from "../../../src/domain/webhooks/RetrySchedule.ts"
import { formatSecret, secretKey, WebhookSecret } from "../../../src/domain/webhooks/WebhookSecret.ts"
import { WebhookEventTypes } from "../../../src/domain/webhooks/WebhookSubscription.ts"
import { checkWebhookUrl, WEBHOOK_URL_MAX_LENGTH } from "../../../src/domain/webhooks/WebhookUrl.ts"

const refused = (address: string) => refusedAddress(parseAddress(address)!)

describe("refusedAddress", () => {
  it("refuses loopback, private, link-local, CGNAT, unspecified, unique-local and multicast addresses", () => {
    const cases: Array<[string, string]> = [
      ["127.0.0.1", "loopback"], ["127.255.0.9", "loopback"], ["::1", "loopback"], ["[::1]", "loopback"],
      ["10.1.2.3", "private"], ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["192.168.1.1", "private"],
      ["169.254.169.254", "link-local"], ["fe80::1", "link-local"], ["febf::1", "link-local"],
      ["100.64.0.1", "shared (CGNAT)"], ["100.127.255.255", "shared (CGNAT)"],
      ["0.0.0.0", "unspecified"], ["::", "unspecified"],
      ["fc00::1", "unique-local"], ["fdff::1", "unique-local"],
      ["224.0.0.1", "multicast"], ["239.255.255.250", "multicast"], ["ff02::1", "multicast"],
      // IPv4-mapped IPv6 is judged as the IPv4 address it carries.
      ["::ffff:127.0.0.1", "loopback"], ["::ffff:10.0.0.1", "private"], ["::ffff:169.254.169.254", "link-local"]
    ]
    for (const [address, kind] of cases) expect(refused(address), address).toBe(kind)
  })

  it("allows public addresses, the neighbours of the refused ranges included", () => {
    for (const address of ["8.8.8.8", "172.15.255.255", "172.32.0.0", "100.63.255.255", "100.128.0.0", "169.255.0.1",
      "2606:4700::1111", "::ffff:8.8.8.8", "fec0::1"]) {
      expect(refused(address), address).toBeUndefined()
    }
  })

  it("parseAddress takes only IP addresses, not names", () => {
    expect(parseAddress("hooks.example.com")).toBeUndefined()
    expect(parseAddress("localhost")).toBeUndefined()
  })
})

describe("checkWebhookUrl", () => {
  const strict = (url: string) => checkWebhookUrl(url, { allowPrivate: false })
  const open = (url: string) => checkWebhookUrl(url, { allowPrivate: true })
  const failure = (result: Result.Result<unknown, string>) => Result.isFailure(result) ? result.failure : undefined

  it("takes an https URL in its normal form", () => {
    expect(Result.getOrThrow(strict("HTTPS://Hooks.Example.com:443/in?a=1"))).toBe("https://hooks.example.com/in?a=1")
  })

  it("refuses what is not an absolute http(s) URL", () => {
    expect(failure(strict("hooks.example.com/in"))).toBe("must be an absolute URL")
    expect(failure(strict("ftp://hooks.example.com/"))).toBe("must be an http or https URL")
    expect(failure(strict("file:///etc/passwd"))).toBe("must be an http or https URL")
  })

  it("needs https unless private addresses are allowed", () => {
    expect(failure(strict("http://hooks.example.com/"))).toBe("must be an https URL")
    expect(Result.isSuccess(open("http://hooks.example.com/"))).toBe(true)
  })

  it("refuses credentials and fragments", () => {
    expect(failure(strict("https://user:pw@hooks.example.com/"))).toBe("must not contain a user name or password")
    expect(failure(strict("https://user@hooks.example.com/"))).toBe("must not contain a user name or password")
    expect(failure(strict("https://hooks.example.com/#x"))).toBe("must not contain a fragment")
  })

  it("bounds the length", () => {
    const long = `https://hooks.example.com/${"a".repeat(WEBHOOK_URL_MAX_LENGTH)}`
    expect(failure(strict(long))).toBe(`must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`)
  })

  it("refuses a refused IP address as the host, in any spelling the URL parser reads as one, unless allowed", () => {
    expect(failure(strict("https://127.0.0.1/"))).toBe("must not point at a loopback address")
    expect(failure(strict("https://0x7f.1/"))).toBe("must not point at a loopback address")
    expect(failure(strict("https://2130706433/"))).toBe("must not point at a loopback address")
    expect(failure(strict("https://[::ffff:169.254.169.254]/"))).toBe("must not point at a link-local address")
    expect(failure(strict("https://[fd00::1]:8443/"))).toBe("must not point at a unique-local address")
    expect(Result.isSuccess(open("http://127.0.0.1:8080/hook"))).toBe(true)
    // A name is judged once resolved (at subscription and at delivery), not here.
    expect(Result.isSuccess(strict("https://localhost/"))).toBe(true)
  })
})

describe("WebhookSecret", () => {
  it("is whsec_ and the base64 of 24 to 64 bytes", () => {
    const valid = Schema.is(WebhookSecret)
    expect(valid(formatSecret(new Uint8Array(24)))).toBe(true)
    expect(valid(formatSecret(new Uint8Array(64)))).toBe(true)
    expect(valid(formatSecret(new Uint8Array(23)))).toBe(false)
    expect(valid(formatSecret(new Uint8Array(65)))).toBe(false)
    expect(valid(`whsk_${Buffer.alloc(32).toString("base64")}`)).toBe(false)
    expect(valid("whsec_not base64!")).toBe(false)
    expect(secretKey(formatSecret(Uint8Array.from([1, 2, 3, ...new Uint8Array(21)])))?.slice(0, 3)).toEqual(Uint8Array.from([1, 2, 3]))
  })
})

describe("WebhookEventTypes", () => {
  it("is a non-empty set of event types", () => {
    const valid = Schema.is(WebhookEventTypes)
    expect(valid(["pet.created"])).toBe(true)
    expect(valid([])).toBe(false)
    expect(valid(["pet.created", "pet.created"])).toBe(false)
    expect(valid(["pet.eaten"])).toBe(false)
  })
})

describe("nextAttemptAt", () => {
  const first = DateTime.makeUnsafe("2026-05-01T00:00:00.000Z")
  const after = (attempt: number, failedAt: DateTime.Utc, random: number) =>
    nextAttemptAt({ attempt, firstAttemptAt: first, failedAt, random })
  const millisAfter = (a: DateTime.Utc, b: DateTime.Utc | undefined) => DateTime.toEpochMillis(b!) - DateTime.toEpochMillis(a)

  it("draws the n-th retry's delay from 0 to 5 s × 2^(n-1), capped at an hour", () => {
    expect(millisAfter(first, after(1, first, 0.999_999))).toBe(4999)
    expect(millisAfter(first, after(2, first, 0.5))).toBe(5000)
    expect(millisAfter(first, after(4, first, 0.5))).toBe(20_000)
    expect(millisAfter(first, after(11, first, 0.5))).toBe(1_800_000)
    expect(millisAfter(first, after(40, first, 0.5))).toBe(1_800_000)
    expect(millisAfter(first, after(3, first, 0))).toBe(0)
  })

  it("schedules nothing later than 24 hours after the first attempt", () => {
    const late = DateTime.addDuration(first, RETRY_WINDOW)
    expect(after(50, DateTime.subtract(late, { minutes: 10 }), 0.999)).toBeUndefined()
    expect(after(50, DateTime.subtract(late, { minutes: 10 }), 0.1)).toBeDefined()
    expect(after(50, late, 0)).toEqual(late)
  })

  it("gives up within 24 hours of retries even at the longest draws", () => {
    let failedAt = first
    let attempts = 1
    for (let next = after(attempts, failedAt, 0.999); next !== undefined; next = after(++attempts, failedAt, 0.999)) failedAt = next
    expect(millisAfter(first, failedAt)).toBeLessThanOrEqual(24 * 3600_000)
    expect(attempts).toBeGreaterThan(20)
  })
})
