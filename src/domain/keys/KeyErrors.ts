import { Schema } from "effect"

/** No managed key has the given id or name (or none that is still live, where that matters). */
export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", {
  ref: Schema.String
}) {
  override get message(): string {
    return `no API key named or with id "${this.ref}"`
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
