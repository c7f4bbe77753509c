/**
 * The photo processor's settings, apart from the processor itself: the configuration
 * reads them without loading sharp.
 */

/** How much processing runs at once and what it accepts. */
export interface Options {
  /** Uploads processed at once; each uses one libvips thread. */
  readonly concurrency: number
  /** Uploads that may wait for a slot; past them an upload fails ProcessingBusy at once. */
  readonly queue: number
  /** Largest image accepted, in pixels (width × height), checked from its header before it is decoded. */
  readonly maxPixels: number
  /** The seconds ProcessingBusy tells the client to wait. */
  readonly retryAfterSeconds: number
}

/** 2 at once (this service's machines have 2 cores), 8 waiting, 40 megapixels, retry in 2 s. */
export const DEFAULTS: Options = { concurrency: 2, queue: 8, maxPixels: 40_000_000, retryAfterSeconds: 2 }
