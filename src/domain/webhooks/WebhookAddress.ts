import { Result } from "effect"
import { IpNetwork, NetAddress } from "effect/net"

// The networks a webhook may not reach unless private addresses are allowed: what would
// let a caller make the service talk to itself, its host or its private network (SSRF).
const REFUSED: ReadonlyArray<readonly [string, string]> = [
  ["0.0.0.0/8", "unspecified"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "shared (CGNAT)"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.168.0.0/16", "private"],
  ["224.0.0.0/4", "multicast"],
  ["255.255.255.255/32", "broadcast"],
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["fc00::/7", "unique-local"],
  ["fe80::/10", "link-local"],
  ["ff00::/8", "multicast"]
]
const NETWORKS = REFUSED.map(([cidr, kind]) => [IpNetwork.fromStringUnsafe(cidr), kind] as const)
const IPV4_MAPPED = IpNetwork.fromStringUnsafe("::ffff:0:0/96")

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
 * undefined when it may. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as the
 * IPv4 address it carries, which is where a connection to it goes.
 */
export const refusedAddress = (address: NetAddress.IpAddress): string | undefined => {
  if (NetAddress.isIpv6Address(address) && IpNetwork.contains(IPV4_MAPPED, address)) {
    const octets = NetAddress.ipv6ToOctets(address)
    return refusedAddress(NetAddress.ipv4FromBytesUnsafe(Uint8Array.from(octets.slice(12))))
  }
  return NETWORKS.find(([network]) => IpNetwork.contains(network, address))?.[1]
}
