import { Option, Result } from "effect"
import type { HttpServerRequest } from "effect/http"
import { IpNetwork, NetAddress } from "effect/net"

const IPV4_MAPPED = "::ffff:"

/**
 * Whose per-address bucket a request without a valid key draws from: the socket's peer
 * (or, behind a trusted proxy, the client HttpMiddleware.xForwardedHeaders found). An IPv4
 * client is its address; an IPv6 client is its /64, the block one subscriber usually holds,
 * so that rotating through one's own addresses does not give fresh buckets.
 */
export const clientBucketOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const address = Option.getOrUndefined(request.remoteAddress)
  if (address === undefined) return "unknown"
  // An IPv4 client on a dual-stack socket is reported as ::ffff:a.b.c.d.
  if (address.startsWith(IPV4_MAPPED) && address.includes(".")) return address.slice(IPV4_MAPPED.length)
  if (!address.includes(":")) return address
  const parsed = NetAddress.ipv6FromString(address)
  if (Result.isFailure(parsed)) return address
  return Result.match(IpNetwork.fromAddress(parsed.success, 64), {
    onFailure: () => address,
    onSuccess: IpNetwork.format
  })
}
