// s3rver ships no types: the part of its API the tests use.
declare module "s3rver" {
  import type { AddressInfo, Server } from "node:net"

  export default class S3rver {
    constructor(options: {
      readonly address?: string
      readonly port?: number
      readonly silent?: boolean
      readonly directory: string
      readonly configureBuckets?: ReadonlyArray<{ readonly name: string }>
    })
    run(): Promise<AddressInfo>
    close(): Promise<void>
    readonly httpServer: Server & { closeAllConnections(): void }
  }
}
