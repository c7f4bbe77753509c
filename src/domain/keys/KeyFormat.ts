import { Option } from "effect"
import type { KeyId } from "./KeyId.ts"

/**
 * The prefix of every managed key, for secret scanners (and people) to recognise one:
 * `as_<key id>_<secret>`, the secret being 32 random bytes (256 bits) in base64url.
 */
export const KEY_PREFIX = "as_"

/** Bytes of randomness in a key's secret. */
export const SECRET_BYTES = 32

const KEY_PATTERN = /^as_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/

/** The key text for an id and a base64url secret of {@link SECRET_BYTES} bytes. */
export const formatKey = (id: KeyId, secret: string): string => `${KEY_PREFIX}${id}_${secret}`

/** The public part of a key, shown in lists: the prefix and the id. */
export const publicPrefix = (id: KeyId): string => `${KEY_PREFIX}${id}`

/** The id a presented key claims, when it has the managed key format. */
export const parseKeyId = (key: string): Option.Option<KeyId> => {
  const match = KEY_PATTERN.exec(key)
  return match === null ? Option.none() : Option.some(match[1] as KeyId)
}
