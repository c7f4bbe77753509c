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

/**
 * 1 at once, 8 waiting, 40 megapixels, retry in 2 s. One at a time: this service's machines
 * have 2 cores, and with 2 at once two uploading clients held both, the list's p99 beside
 * them 3.8-4.3x its p99 alone (bench uploads section); with 1 (and libvips' threads at nice
 * 19) 1.0-1.6x on PostgreSQL. A 12-megapixel JPEG takes about 0.4 s of CPU.
 */
export const DEFAULTS: Options = { concurrency: 1, queue: 8, maxPixels: 40_000_000, retryAfterSeconds: 2 }
