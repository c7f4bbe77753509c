/** The lines of the Server-Sent Events feed, as the fan-out writes them. */
import type { StoreEvent } from "../../../../domain/events/StoreEvent.ts"
import * as EventJsonText from "../../api/EventJsonText.ts"

const encoder = new TextEncoder()

/** Text as the bytes a stream sends. */
export const encode = (text: string): Uint8Array => encoder.encode(text)

/** One frame per event: its id (what Last-Event-ID sends back), its type, its JSON. */
export const frame = (event: StoreEvent): string =>
  `id: ${event.id}\nevent: ${event.type}\ndata: ${EventJsonText.eventJson(event)}\n\n`

/** The first line, at once, so that the client knows the stream is open. */
export const CONNECTED = encode(": connected\n\n")

/** A comment line sent after a quiet heartbeat interval, so that proxies keep the stream open. */
export const HEARTBEAT = encode(": heartbeat\n\n")
