import { randomUUID } from "node:crypto"

/** The header that carries a request's id, in both directions. */
export const REQUEST_ID_HEADER = "x-request-id"

/**
 * A client's own id is honoured when it is short and made of characters that are safe in
 * a header, a log line and a trace attribute (no spaces, quotes or controls); anything
 * else, including duplicated headers (which Node joins with ", "), is replaced.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:+/=@-]{1,128}$/

/** The id a request goes by: the client's when sane, a fresh UUID otherwise. */
export const requestIdFor = (sent: string | ReadonlyArray<string> | undefined): string =>
  typeof sent === "string" && SANE_REQUEST_ID.test(sent) ? sent : randomUUID()
