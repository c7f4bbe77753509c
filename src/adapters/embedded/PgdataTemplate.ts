/**
 * A pre-initialised data directory: what PGlite's initdb makes of an empty
 * directory, cleanly closed, as a tar next to this module (Brotli with a
 * 16 MB window: 1.5 MB, where gzip, which cannot see one database's files
 * from the next, takes 4.5 MB). An empty DATA_DIR is filled from it in half a
 * second instead of running initdb (several seconds, and a second PGlite and
 * a copy of the whole directory in memory, near 0.7 GB at its peak).
 *
 * The file is made for one PGlite version and named after it; when there is
 * none for the installed version, PGlite runs initdb as before. Make it with
 * `node scripts/pgdataTemplate.ts [directory]` (by default next to this module).
 * The service's bundle copies it next to its chunks; the library's package does
 * not carry it (a host of the memory store never uses it): embedders of this
 * store install it as the package `animal-store-pgdata` (packages/pgdata/).
 */
import { PGlite } from "@electric-sql/pglite"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Zlib from "node:zlib"

const pgliteVersion: string = JSON.parse(
  Fs.readFileSync(new URL("../package.json", import.meta.resolve("@electric-sql/pglite")), "utf8")
).version

const fileName = `pgdata-pglite-${pgliteVersion}.tar.br`

/** Where the template for the installed PGlite is looked for first, and written by default. */
export const file: string = fileURLToPath(new URL(fileName, import.meta.url))

/** The package that carries the template to the library's embedders, an optional peer dependency. */
export const packageName = "animal-store-pgdata"

/**
 * The template for the installed PGlite: next to this module (the repository, the
 * service's bundle), else in {@link packageName} when the host installed it; `undefined`
 * when neither has one, and PGlite runs initdb.
 */
export const located = (): string | undefined => {
  if (Fs.existsSync(file)) return file
  try {
    const path = fileURLToPath(import.meta.resolve(`${packageName}/${fileName}`))
    return Fs.existsSync(path) ? path : undefined
  } catch {
    return undefined
  }
}

/** PGlite's mark of an initialised data directory; restored last, so a restore cut short is redone. */
const versionFile = "PG_VERSION"

/** Whether `dataDir` holds a database already (or a restore or initdb finished in it). */
export const initialised = (dataDir: string): boolean => Fs.existsSync(Path.join(dataDir, versionFile))

// ustar header fields: offset and length.
const block = 512
const nameField = [0, 100] as const
const modeField = [100, 8] as const
const sizeField = [124, 12] as const
const mtimeField = [136, 12] as const
const checksumField = [148, 8] as const
const typeField = 156
const magicField = 257
const prefixField = [345, 155] as const
const fileType = "0"
const directoryType = "5"

interface Entry {
  /** Relative to the data directory, `/`-separated. */
  readonly name: string
  readonly mode: number
  /** `undefined` for a directory. */
  readonly data: Uint8Array | undefined
}

const octal = (header: Buffer, [offset, length]: readonly [number, number], value: number): void => {
  header.write(value.toString(8).padStart(length - 1, "0"), offset, length - 1, "latin1")
}

const header = (entry: Entry): Buffer => {
  const bytes = Buffer.alloc(block)
  if (Buffer.byteLength(entry.name) > nameField[1]) throw new Error(`PgdataTemplate: name too long: ${entry.name}`)
  bytes.write(entry.name, nameField[0], nameField[1], "utf8")
  octal(bytes, modeField, entry.mode)
  octal(bytes, sizeField, entry.data?.length ?? 0)
  octal(bytes, mtimeField, 0)
  bytes.write(entry.data === undefined ? directoryType : fileType, typeField, "latin1")
  bytes.write("ustar\u000000", magicField, "latin1")
  bytes.fill(" ", checksumField[0], checksumField[0] + checksumField[1])
  let sum = 0
  for (const byte of bytes) sum += byte
  bytes.write(`${sum.toString(8).padStart(6, "0")}\0 `, checksumField[0], "latin1")
  return bytes
}

const padding = (length: number): Buffer => Buffer.alloc((block - (length % block)) % block)

const field = (bytes: Uint8Array, [offset, length]: readonly [number, number]): string => {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset + offset, length).toString("utf8")
  const end = text.indexOf("\0")
  return end === -1 ? text : text.slice(0, end)
}

function* entries(tar: Uint8Array): Generator<Entry> {
  for (let offset = 0; offset + block <= tar.length;) {
    const head = tar.subarray(offset, offset + block)
    if (head.every((byte) => byte === 0)) return
    const prefix = field(head, prefixField)
    const name = prefix === "" ? field(head, nameField) : `${prefix}/${field(head, nameField)}`
    const size = parseInt(field(head, sizeField).trim() || "0", 8)
    const mode = parseInt(field(head, modeField).trim() || "0", 8)
    const type = String.fromCharCode(head[typeField] ?? 0)
    offset += block
    if (type === directoryType) {
      yield { name, mode, data: undefined }
    } else if (type === fileType || type === "\0") {
      yield { name, mode, data: tar.subarray(offset, offset + size) }
    } else {
      throw new Error(`PgdataTemplate: unexpected entry type ${JSON.stringify(type)} for ${name}`)
    }
    offset += size + padding(size).length
  }
}

/** The template's compressed tar of `dataDir`, directories before what they contain. */
const pack = (dataDir: string): Buffer => {
  const parts: Array<Buffer | Uint8Array> = []
  const walk = (relative: string): void => {
    for (const dirent of Fs.readdirSync(Path.join(dataDir, relative), { withFileTypes: true })) {
      const name = relative === "" ? dirent.name : `${relative}/${dirent.name}`
      const path = Path.join(dataDir, name)
      const mode = Fs.statSync(path).mode & 0o7777
      if (dirent.isDirectory()) {
        parts.push(header({ name, mode, data: undefined }))
        walk(name)
      } else {
        const data = Fs.readFileSync(path)
        parts.push(header({ name, mode, data }), data, padding(data.length))
      }
    }
  }
  walk("")
  parts.push(Buffer.alloc(2 * block))
  return Zlib.brotliCompressSync(Buffer.concat(parts), {
    params: { [Zlib.constants.BROTLI_PARAM_QUALITY]: 9, [Zlib.constants.BROTLI_PARAM_LGWIN]: 24 }
  })
}

/**
 * Fills the empty `dataDir` from a template. Each file is overwritten, so a
 * restore cut short and begun again leaves nothing of the first attempt.
 */
export const restore = (template: Uint8Array, dataDir: string): void => {
  const root = Path.resolve(dataDir)
  let version: Entry | undefined
  for (const entry of entries(Zlib.brotliDecompressSync(template))) {
    const path = Path.resolve(root, entry.name)
    if (!path.startsWith(`${root}${Path.sep}`)) {
      throw new Error(`PgdataTemplate: entry outside the directory: ${entry.name}`)
    }
    if (entry.data === undefined) {
      Fs.mkdirSync(path, { recursive: true, mode: entry.mode })
    } else if (entry.name === versionFile) {
      version = entry
    } else {
      Fs.writeFileSync(path, entry.data, { mode: entry.mode })
    }
  }
  if (version?.data === undefined) throw new Error(`PgdataTemplate: the template has no ${versionFile}`)
  Fs.writeFileSync(Path.join(root, versionFile), version.data, { mode: version.mode })
}

/**
 * Runs initdb (PGlite's, into a scratch directory, cleanly closed) and writes
 * the template into `directory`; returns its path.
 */
export const make = async (directory: string): Promise<string> => {
  const target = Path.join(directory, fileName)
  const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-pgdata-"))
  try {
    const pglite = await PGlite.create(scratch)
    await pglite.close()
    Fs.writeFileSync(target, pack(scratch))
    return target
  } finally {
    Fs.rmSync(scratch, { recursive: true, force: true })
  }
}
