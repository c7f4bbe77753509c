import { DateTime, Schema } from "effect"

/**
 * No managed key has the given id or name (or none that is still live, where that
 * matters). When keys of that id or name were revoked, `revokedAt` says when (the latest),
 * so that the refusal does not deny what `list` shows.
 */
export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", {
  ref: Schema.String,
  revokedAt: Schema.optional(Schema.DateTimeUtc)
}) {
  override get message(): string {
    return this.revokedAt === undefined
      ? `no API key named or with id "${this.ref}"`
      : `the API key "${this.ref}" was revoked at ${DateTime.formatIso(this.revokedAt)}; ` +
        `create a new one with \`create --name ${this.ref}\``
  }
}

/** A live key already has the name: names tell live keys apart (except during a rotation). */
export class KeyNameInUse extends Schema.TaggedError<KeyNameInUse>()("KeyNameInUse", {
  name: Schema.String
}) {
  override get message(): string {
    return `a live API key is already named "${this.name}"; revoke or rotate it instead`
  }
}
