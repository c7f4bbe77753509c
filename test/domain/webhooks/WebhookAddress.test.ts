import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseAddress, refusedAddress } from "../../../src/domain/webhooks/WebhookAddress.ts"
import { checkWebhookUrl } from "../../../src/domain/webhooks/WebhookUrl.ts"

// The IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890, RFC 8190 and the
// RFCs that added entries since), range by range: the first and last address of every
// block a webhook may not reach, with the reason it is refused, and the globally
// reachable entries and neighbours that must still be allowed.

const judge = (address: string) => {
  const parsed = parseAddress(address)
  if (parsed === undefined) throw new Error(`${address} is not an IP address`)
  return refusedAddress(parsed)
}

const IETF = "reserved (IETF protocol assignments)"

const IPV4_REFUSED: ReadonlyArray<readonly [string, string]> = [
  // 0.0.0.0/8 "this network" (RFC 791)
  ["0.0.0.0", "unspecified"], ["0.255.255.255", "unspecified"],
  // 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 private-use (RFC 1918)
  ["10.0.0.0", "private"], ["10.255.255.255", "private"],
  ["172.16.0.0", "private"], ["172.31.255.255", "private"],
  ["192.168.0.0", "private"], ["192.168.255.255", "private"],
  // 100.64.0.0/10 shared address space (RFC 6598)
  ["100.64.0.0", "shared (CGNAT)"], ["100.127.255.255", "shared (CGNAT)"],
  // 127.0.0.0/8 loopback (RFC 1122)
  ["127.0.0.0", "loopback"], ["127.255.255.255", "loopback"],
  // 169.254.0.0/16 link local (RFC 3927)
  ["169.254.0.0", "link-local"], ["169.254.255.255", "link-local"],
  // 192.0.0.0/24 IETF protocol assignments (RFC 6890), with its not globally reachable
  // entries: 192.0.0.0/29 DS-Lite (RFC 7335), 192.0.0.8/32 dummy (RFC 7600),
  // 192.0.0.170-171 NAT64/DNS64 discovery (RFC 7050)
  ["192.0.0.0", IETF], ["192.0.0.7", IETF], ["192.0.0.8", IETF], ["192.0.0.11", IETF],
  ["192.0.0.170", IETF], ["192.0.0.171", IETF], ["192.0.0.255", IETF],
  // 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 documentation (RFC 5737)
  ["192.0.2.0", "documentation"], ["192.0.2.255", "documentation"],
  ["198.51.100.0", "documentation"], ["198.51.100.255", "documentation"],
  ["203.0.113.0", "documentation"], ["203.0.113.255", "documentation"],
  // 192.88.99.0/24 deprecated 6to4 relay anycast (RFC 7526), 192.88.99.2/32 6a44 (RFC 6751)
  ["192.88.99.0", "6to4 relay anycast (deprecated)"], ["192.88.99.1", "6to4 relay anycast (deprecated)"],
  ["192.88.99.255", "6to4 relay anycast (deprecated)"], ["192.88.99.2", "6a44 relay anycast"],
  // 198.18.0.0/15 benchmarking (RFC 2544)
  ["198.18.0.0", "benchmarking"], ["198.19.255.255", "benchmarking"],
  // 224.0.0.0/4 multicast (RFC 5771; not in the registry, refused all the same)
  ["224.0.0.0", "multicast"], ["239.255.255.255", "multicast"],
  // 240.0.0.0/4 reserved (RFC 1112), 255.255.255.255/32 limited broadcast (RFC 919)
  ["240.0.0.0", "reserved"], ["255.255.255.254", "reserved"],
  ["255.255.255.255", "broadcast"]
]

const IPV6_REFUSED: ReadonlyArray<readonly [string, string]> = [
  // ::/128 unspecified, ::1/128 loopback (RFC 4291)
  ["::", "unspecified"], ["::1", "loopback"],
  // ::/96 IPv4-compatible (deprecated, RFC 4291 2.5.5.1)
  ["::2", "IPv4-compatible (deprecated)"], ["::ffff:ffff", "IPv4-compatible (deprecated)"],
  ["::127.0.0.1", "IPv4-compatible (deprecated)"], ["::8.8.8.8", "IPv4-compatible (deprecated)"],
  // ::ffff:0:0:0/96 IPv4-translated (SIIT, RFC 2765, obsoleted)
  ["::ffff:0:0.0.0.0", "IPv4-translated (deprecated)"], ["::ffff:0:10.0.0.1", "IPv4-translated (deprecated)"],
  ["::ffff:0:8.8.8.8", "IPv4-translated (deprecated)"], ["::ffff:0:ffff:ffff", "IPv4-translated (deprecated)"],
  // 64:ff9b:1::/48 local-use IPv4/IPv6 translation (RFC 8215)
  ["64:ff9b:1::", "NAT64 local-use"], ["64:ff9b:1::808:808", "NAT64 local-use"],
  ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "NAT64 local-use"],
  // 100::/64 discard-only (RFC 6666), 100:0:0:1::/64 dummy prefix (RFC 9780)
  ["100::", "discard-only"], ["100::ffff:ffff:ffff:ffff", "discard-only"],
  ["100:0:0:1::", "dummy"], ["100:0:0:1:ffff:ffff:ffff:ffff", "dummy"],
  // 2001::/23 IETF protocol assignments (RFC 2928), outside its more specific entries
  ["2001:1::", IETF], ["2001:1::4", IETF], ["2001:2:1::", IETF], ["2001:4:111:ffff:ffff:ffff:ffff:ffff", IETF],
  ["2001:4:113::", IETF], ["2001:40::", IETF], ["2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", IETF],
  // 2001::/32 Teredo (RFC 4380)
  ["2001::", "Teredo"], ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
  ["2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "Teredo"],
  // 2001:2::/48 benchmarking (RFC 5180)
  ["2001:2::", "benchmarking"], ["2001:2:0:ffff:ffff:ffff:ffff:ffff", "benchmarking"],
  // 2001:10::/28 deprecated ORCHID (RFC 4843), 2001:20::/28 ORCHIDv2 (RFC 7343),
  // 2001:30::/28 drone remote ID entity tags (RFC 9374)
  ["2001:10::", "ORCHID (deprecated)"], ["2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", "ORCHID (deprecated)"],
  ["2001:20::", "ORCHIDv2"], ["2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", "ORCHIDv2"],
  ["2001:30::", "drone entity tag (DET)"], ["2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", "drone entity tag (DET)"],
  // 2001:db8::/32 (RFC 3849) and 3fff::/20 (RFC 9637) documentation
  ["2001:db8::", "documentation"], ["2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"],
  ["3fff::", "documentation"], ["3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"],
  // 5f00::/16 SRv6 SIDs (RFC 9602)
  ["5f00::", "SRv6 SID"], ["5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "SRv6 SID"],
  // fc00::/7 unique local (RFC 4193), fe80::/10 link-local (RFC 4291), ff00::/8 multicast
  ["fc00::", "unique-local"], ["fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique-local"],
  ["fe80::", "link-local"], ["febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"],
  ["ff00::", "multicast"], ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast"]
]

// Transition forms that carry an IPv4 address are judged as that address.
const EMBEDDED: ReadonlyArray<readonly [string, string | undefined]> = [
  // ::ffff:0:0/96 IPv4-mapped (RFC 4291)
  ["::ffff:127.0.0.1", "loopback"], ["::ffff:192.0.2.1", "documentation"], ["::ffff:198.18.0.1", "benchmarking"],
  ["::ffff:240.0.0.1", "reserved"], ["::ffff:8.8.8.8", undefined], ["::ffff:192.0.0.9", undefined],
  // 64:ff9b::/96 NAT64 well-known prefix (RFC 6052): the last 32 bits
  ["64:ff9b::7f00:1", "loopback"], ["64:ff9b::", "unspecified"], ["64:ff9b::a00:1", "private"],
  ["64:ff9b::a9fe:a9fe", "link-local"], ["64:ff9b::c000:201", "documentation"], ["64:ff9b::ffff:ffff", "broadcast"],
  ["64:ff9b::808:808", undefined], ["64:ff9b::1.1.1.1", undefined],
  // 2002::/16 6to4 (RFC 3056): bits 16 to 48
  ["2002:c0a8:0101::1", "private"], ["2002:7f00:1::", "loopback"], ["2002::", "unspecified"],
  ["2002:a9fe:a9fe::1", "link-local"], ["2002:6440:1::1", "shared (CGNAT)"],
  ["2002:c058:6301::1", "6to4 relay anycast (deprecated)"], ["2002:e000:1::1", "multicast"], ["2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "broadcast"],
  ["2002:0808:0808::1", undefined], ["2002:0808:0808:ffff:ffff:ffff:ffff:ffff", undefined]
]

const ALLOWED: ReadonlyArray<string> = [
  // Public addresses and the neighbours of the refused IPv4 ranges
  "8.8.8.8", "1.1.1.1", "1.0.0.0", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
  "126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
  "191.255.255.255", "192.0.1.0", "192.0.1.255", "192.0.3.0", "192.88.98.255", "192.88.100.0",
  "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "198.20.0.1", "198.51.99.255",
  "198.51.101.0", "203.0.112.255", "203.0.114.0", "223.255.255.255",
  // IPv4 registry entries marked globally reachable: PCP and TURN anycast (inside
  // 192.0.0.0/24, allowed by their more specific entries), AS112-v4, AMT, AS112 direct delegation
  "192.0.0.9", "192.0.0.10", "192.31.196.0", "192.31.196.255", "192.52.193.1", "192.175.48.6",
  // Public IPv6 and the neighbours of the refused ranges
  "2606:4700::1", "2606:4700::1111", "2003::1", "2001:200::1", "2001:4860:4860::8888",
  "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::", "2001:200::",
  "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::", "3fff:ffff::1", "2003::",
  // IPv6 registry entries marked globally reachable inside 2001::/23: PCP, TURN and
  // DNS-SD SRP anycast, AMT, AS112-v6; and the AS112 direct delegation
  "2001:1::1", "2001:1::2", "2001:1::3", "2001:3::", "2001:3:ffff:ffff:ffff:ffff:ffff:ffff",
  "2001:4:112::", "2001:4:112:ffff:ffff:ffff:ffff:ffff", "2620:4f:8000::6", "2620:4f:8000::42"
]

describe("refusedAddress, the IPv4 special-purpose registry", () => {
  it.each(IPV4_REFUSED)("refuses %s as %s", (address, kind) => {
    expect(judge(address)).toBe(kind)
  })
})

describe("refusedAddress, the IPv6 special-purpose registry", () => {
  it.each(IPV6_REFUSED)("refuses %s as %s", (address, kind) => {
    expect(judge(address)).toBe(kind)
  })
})

describe("refusedAddress, IPv6 forms carrying an IPv4 address", () => {
  it.each(EMBEDDED)("judges %s as the IPv4 address it carries: %s", (address, kind) => {
    expect(judge(address)).toBe(kind)
  })
})

describe("refusedAddress, globally reachable addresses", () => {
  it.each(ALLOWED)("allows %s", (address) => {
    expect(judge(address)).toBeUndefined()
  })
})

describe("parseAddress, the bracketed form of a URL's host", () => {
  it.each([
    ["[64:ff9b::7f00:1]", "loopback"],
    ["[2002:c0a8:0101::1]", "private"],
    ["[::127.0.0.1]", "IPv4-compatible (deprecated)"],
    ["[::ffff:0:10.0.0.1]", "IPv4-translated (deprecated)"],
    ["[2001:db8::1]", "documentation"],
    ["[5f00::1]", "SRv6 SID"],
    ["[64:ff9b::808:808]", undefined],
    ["[2002:0808:0808::1]", undefined]
  ] as const)("judges %s as %s", (host, kind) => {
    expect(judge(host)).toBe(kind)
  })

  it("refuses a URL whose host is such an address, in the form the URL normalizes it to", () => {
    const failure = (url: string) => {
      const result = checkWebhookUrl(url, { allowPrivate: false })
      return Result.isFailure(result) ? result.failure : undefined
    }
    expect(failure("https://[64:ff9b::127.0.0.1]/in")).toBe("must not point at a loopback address")
    expect(failure("https://[2002:c0a8:101::1]/in")).toBe("must not point at a private address")
    expect(failure("https://198.18.0.1/in")).toBe("must not point at a benchmarking address")
    expect(failure("https://[64:ff9b::8.8.8.8]/in")).toBeUndefined()
    expect(Result.isSuccess(checkWebhookUrl("https://[2002:c0a8:101::1]/in", { allowPrivate: true }))).toBe(true)
  })
})
