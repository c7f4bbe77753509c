/** Images for the photo tests, made with sharp itself, and hostile ones made by hand. */
import sharp from "sharp"
import { crc32 } from "node:zlib"

/** A `width`×`height` image of two colours (left half red, right half blue), so orientation shows. */
const halves = (width: number, height: number) => {
  const pixels = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 3
      if (x < width / 2) pixels[at] = 255
      else pixels[at + 2] = 255
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } })
}

/** A JPEG as a phone writes it: stored 600×400 with EXIF orientation 6 (shown rotated 90°), GPS and camera tags. */
export const phoneJpeg = (): Promise<Buffer> =>
  halves(600, 400).withMetadata({
    orientation: 6,
    exif: {
      IFD0: { Make: "PhoneMaker", Model: "Phone 12", Copyright: "Someone" },
      IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 2964/100", GPSLongitudeRef: "E", GPSLongitude: "2/1 17/1 4020/100" }
    }
  }).jpeg().toBuffer()

export const png = (width = 300, height = 200): Promise<Buffer> => halves(width, height).png().toBuffer()
export const webp = (width = 2000, height = 1500): Promise<Buffer> => halves(width, height).webp().toBuffer()
export const jpeg = (width = 300, height = 200): Promise<Buffer> => halves(width, height).jpeg().toBuffer()

const chunk = (type: string, data: Buffer) => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "latin1"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A decompression bomb: a PNG of a few dozen bytes whose header declares 100,000 × 100,000 pixels. */
export const pngBomb = (): Buffer => {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(100_000, 0)
  header.writeUInt32BE(100_000, 4)
  header.set([8, 2, 0, 0, 0], 8) // 8-bit RGB, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
    chunk("IEND", Buffer.alloc(0))
  ])
}

/** The markup a polyglot carries after a valid image: a browser sniffing it would run it. */
export const POLYGLOT_PAYLOAD = "<html><script>alert('polyglot')</script></html>"

/** A valid JPEG with an HTML page after its end: an image to a decoder, a page to a sniffer. */
export const polyglotJpeg = async (): Promise<Buffer> => Buffer.concat([await jpeg(), Buffer.from(POLYGLOT_PAYLOAD)])

/** PNG's magic bytes followed by a page: the signature is all of the image there is. */
export const pngMagicThenHtml = (): Buffer =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(POLYGLOT_PAYLOAD)])
