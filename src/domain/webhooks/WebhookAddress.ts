import { Result } from "effect"
import { IpNetwork, NetAddress } from "effect/net"

// The networks a webhook may not reach unless private addresses are allowed: what would
// let a caller make the service talk to itself, its host or its private network (SSRF),
// and every other block of the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (RFC 6890, RFC 8190 and the RFCs that added entries since) that is not globally
// reachable: no webhook receiver lives there, and some of them route somewhere local.
// Each network comes with the reason shown when an address in it is refused.
//
// The most specific network containing an address decides. A kind of undefined marks an
// entry the registries record as globally reachable inside a block that is not (the
// registries' own rule: 192.0.0.0/24 and 2001::/23 are "not usable unless by virtue of a
// more specific reservation"), so such an address is allowed: PCP and TURN anycast,
// AMT, AS112. Globally reachable entries outside any refused block (192.31.196.0/24,
// 192.52.193.0/24, 192.175.48.0/24, 2620:4f:8000::/48) need no entry: they are allowed
// like any other public address.
const REFUSED: ReadonlyArray<readonly [string, string | undefined]> = [
  // IPv4
  ["0.0.0.0/8", "unspecified"], // "this network", RFC 791
  ["10.0.0.0/8", "private"], // RFC 1918
  ["100.64.0.0/10", "shared (CGNAT)"], // RFC 6598
  ["127.0.0.0/8", "loopback"], // RFC 1122
  ["169.254.0.0/16", "link-local"], // RFC 3927
  ["172.16.0.0/12", "private"], // RFC 1918
  ["192.0.0.0/24", "reserved (IETF protocol assignments)"], // RFC 6890: DS-Lite, dummy, NAT64 discovery...
  ["192.0.0.9/32", undefined], // PCP anycast, RFC 7723: globally reachable
  ["192.0.0.10/32", undefined], // TURN anycast, RFC 8155: globally reachable
  ["192.0.2.0/24", "documentation"], // TEST-NET-1, RFC 5737
  // The registry's 6to4 relay anycast entry is terminated (RFC 7526) and has no
  // reachability recorded; refused all the same: operators still route it to a relay of
  // their own, a router inside their network. 192.88.99.2 (6a44) is not globally reachable.
  ["192.88.99.0/24", "6to4 relay anycast (deprecated)"],
  ["192.88.99.2/32", "6a44 relay anycast"], // RFC 6751
  ["192.168.0.0/16", "private"], // RFC 1918
  ["198.18.0.0/15", "benchmarking"], // RFC 2544
  ["198.51.100.0/24", "documentation"], // TEST-NET-2, RFC 5737
  ["203.0.113.0/24", "documentation"], // TEST-NET-3, RFC 5737
  ["224.0.0.0/4", "multicast"], // RFC 5771, not in the special-purpose registry
  ["240.0.0.0/4", "reserved"], // RFC 1112
  ["255.255.255.255/32", "broadcast"], // RFC 919
  // IPv6
  ["::/128", "unspecified"], // RFC 4291
  ["::1/128", "loopback"], // RFC 4291
  // IPv4-compatible (::a.b.c.d) and IPv4-translated (SIIT, ::ffff:0:a.b.c.d) addresses are
  // refused whatever IPv4 address they carry: both are deprecated (RFC 4291 2.5.5.1;
  // RFC 2765, obsoleted), no receiver is reached through one, and where a connection to
  // one goes depends on the host (Linux may tunnel ::/96 to the IPv4 address).
  ["::/96", "IPv4-compatible (deprecated)"],
  ["::ffff:0:0:0/96", "IPv4-translated (deprecated)"],
  // 64:ff9b::/96 (NAT64, RFC 6052) is judged as the IPv4 address it carries (below); the
  // local-use prefix is refused outright: it reaches a translator of the local network.
  ["64:ff9b:1::/48", "NAT64 local-use"], // RFC 8215
  ["100::/64", "discard-only"], // RFC 6666
  ["100:0:0:1::/64", "dummy"], // RFC 9780
  ["2001::/23", "reserved (IETF protocol assignments)"], // RFC 2928
  // Teredo is refused outright rather than judged by the client IPv4 address it carries
  // (obfuscated): the registry records no reachability for it, a connection to one goes
  // through a Teredo relay to an IPv4 address and port of the address's choosing, and the
  // public Teredo service is gone.
  ["2001::/32", "Teredo"], // RFC 4380
  ["2001:1::1/128", undefined], // PCP anycast, RFC 7723: globally reachable
  ["2001:1::2/128", undefined], // TURN anycast, RFC 8155: globally reachable
  ["2001:1::3/128", undefined], // DNS-SD service registration anycast, RFC 9665: globally reachable
  ["2001:2::/48", "benchmarking"], // RFC 5180
  ["2001:3::/32", undefined], // AMT, RFC 7450: globally reachable
  ["2001:4:112::/48", undefined], // AS112-v6, RFC 7535: globally reachable
  ["2001:10::/28", "ORCHID (deprecated)"], // RFC 4843, returned to IANA
  // The registry records ORCHIDv2 and DETs as globally reachable; refused all the same:
  // both are HIP host identity tags, identifiers rather than locators (RFC 7343 section 1,
  // RFC 9374), which routers may drop (RFC 7343 section 3) and only a host's own HIP layer
  // maps to an address, so no receiver is reached through one.
  ["2001:20::/28", "ORCHIDv2"], // RFC 7343
  ["2001:30::/28", "drone entity tag (DET)"], // RFC 9374
  ["2001:db8::/32", "documentation"], // RFC 3849
  ["3fff::/20", "documentation"], // RFC 9637
  ["5f00::/16", "SRv6 SID"], // RFC 9602
  ["fc00::/7", "unique-local"], // RFC 4193
  ["fe80::/10", "link-local"], // RFC 4291
  ["ff00::/8", "multicast"] // RFC 4291
]
// Most specific first, so the first network containing an address is the one that decides.
const NETWORKS = REFUSED
  .map(([cidr, kind]) => [IpNetwork.fromStringUnsafe(cidr), kind] as const)
  .sort(([a], [b]) => b.prefixLength - a.prefixLength)

// IPv6 addresses that a connection to reaches as an IPv4 address, with where in the 16
// bytes that IPv4 address is: they are judged as it. 6to4 (2002::/16, whose registry
// entry records no reachability) is refused only when the IPv4 address it wraps is,
// rather than as a whole: a 6to4 address of a public IPv4 address is as public as it.
const EMBEDDING: ReadonlyArray<readonly [IpNetwork.IpNetwork, number]> = [
  [IpNetwork.fromStringUnsafe("::ffff:0:0/96"), 12], // IPv4-mapped, RFC 4291
  [IpNetwork.fromStringUnsafe("64:ff9b::/96"), 12], // NAT64 well-known prefix, RFC 6052
  [IpNetwork.fromStringUnsafe("2002::/16"), 2] // 6to4, RFC 3056
]

/**
 * An IP address as a URL's hostname or a resolver's answer writes it ("[::1]" or "::1"),
 * or undefined when `host` is a name.
 */
export const parseAddress = (host: string): NetAddress.IpAddress | undefined => {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  return Result.getOrUndefined(NetAddress.ipFromString(bare))
}

/**
 * Why a webhook may not be delivered to `address` ("loopback", "private"...), or
 * undefined when it may. An IPv6 address that carries an IPv4 address a connection to it
 * goes to (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:AABB:CCDD::) is
 * judged as that IPv4 address.
 */
export const refusedAddress = (address: NetAddress.IpAddress): string | undefined => {
  if (NetAddress.isIpv6Address(address)) {
    const embedding = EMBEDDING.find(([network]) => IpNetwork.contains(network, address))
    if (embedding !== undefined) {
      const start = embedding[1]
      const octets = NetAddress.ipv6ToOctets(address)
      return refusedAddress(NetAddress.ipv4FromBytesUnsafe(Uint8Array.from(octets.slice(start, start + 4))))
    }
  }
  return NETWORKS.find(([network]) => IpNetwork.contains(network, address))?.[1]
}
