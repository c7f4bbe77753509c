import { Schema } from "effect"
import { PetId } from "../pets/PetId.ts"
import { PhotoId } from "./PhotoId.ts"

/** The pet has no photo with the requested id. */
export class PhotoNotFound extends Schema.TaggedError<PhotoNotFound>()("PhotoNotFound", {
  petId: PetId,
  id: PhotoId
}) {
  override get message(): string {
    return `pet ${this.petId} has no photo ${this.id}`
  }
}

/** The pet already has as many photos as a pet may have. */
export class TooManyPhotos extends Schema.TaggedError<TooManyPhotos>()("TooManyPhotos", {
  petId: PetId,
  limit: Schema.Int
}) {
  override get message(): string {
    return `pet ${this.petId} already has ${this.limit} photos, the most a pet may have; delete one first`
  }
}

/** The upload is not an image of a supported type, or not the type it says it is. */
export class UnsupportedImage extends Schema.TaggedError<UnsupportedImage>()("UnsupportedImage", {
  message: Schema.String
}) {}

/** The upload claims a supported type but does not decode as an image within the limits. */
export class InvalidImage extends Schema.TaggedError<InvalidImage>()("InvalidImage", {
  message: Schema.String
}) {}

/** The upload is larger than the service accepts. */
export class PhotoTooLarge extends Schema.TaggedError<PhotoTooLarge>()("PhotoTooLarge", {
  limit: Schema.Int
}) {
  override get message(): string {
    return `the photo exceeds ${this.limit} bytes`
  }
}

/** Every processing slot and queue place is taken: the upload may be retried after `retryAfter` seconds. */
export class ProcessingBusy extends Schema.TaggedError<ProcessingBusy>()("ProcessingBusy", {
  retryAfter: Schema.Int
}) {
  override get message(): string {
    return `photo processing is busy; retry in ${this.retryAfter} s`
  }
}

/** This instance has no photo processor (sharp is not installed where it runs): it takes no upload. */
export class ProcessingUnavailable extends Schema.TaggedError<ProcessingUnavailable>()("ProcessingUnavailable", {}) {
  override get message(): string {
    return "this instance cannot process photos (its photo processor, sharp, is not installed); it takes no upload"
  }
}

/** A photo URL's signature is wrong, made for another path, or expired. */
export class PhotoUrlRefused extends Schema.TaggedError<PhotoUrlRefused>()("PhotoUrlRefused", {}) {
  override get message(): string {
    return "the URL's signature is not valid or has expired; list the photos again for fresh URLs"
  }
}
