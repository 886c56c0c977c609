/**
 * A small zip writer for `picomcp bundle`: deflated (or stored) files, UTF-8 names, Unix modes, the same
 * bytes for the same files (a fixed timestamp), and no zip64: a bundle over 4 GiB or 65,535 files is refused.
 */
import { deflateRawSync } from "node:zlib";

/** One file of the archive. */
export interface ZipFile {
  /** Its path in the archive, with `/` between folders. */
  path: string;
  data: Uint8Array;
  /** Its Unix permission bits (0o644, 0o755). */
  mode: number;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC-32 of `data` (the zip format's checksum). */
export function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const LIMIT = 0xffffffff;
const UTF8_NAMES = 0x0800;
// 1980-01-01 00:00, the format's first day: the same files make the same archive
const DOS_TIME = 0;
const DOS_DATE = (1 << 5) | 1;

/** What a local header and the central directory's header both say of an entry. */
interface Entry {
  method: number;
  crc: number;
  /** Bytes stored, and bytes once inflated. */
  size: number;
  length: number;
  name: Buffer;
}

/**
 * Writes the fields a local header and a central directory header share, in the same order, from
 * `at` (6 in the one, 8 in the other): flags, method, time, date, CRC-32, both sizes, the name's length.
 */
function writeEntry(buffer: Buffer, at: number, e: Entry): void {
  buffer.writeUInt16LE(UTF8_NAMES, at);
  buffer.writeUInt16LE(e.method, at + 2);
  buffer.writeUInt16LE(DOS_TIME, at + 4);
  buffer.writeUInt16LE(DOS_DATE, at + 6);
  buffer.writeUInt32LE(e.crc, at + 8);
  buffer.writeUInt32LE(e.size, at + 12);
  buffer.writeUInt32LE(e.length, at + 16);
  buffer.writeUInt16LE(e.name.length, at + 20);
}

/** The archive of `files`, in the order given. */
export function zip(files: readonly ZipFile[]): Buffer {
  if (files.length >= 0xffff) throw new Error(`${files.length} files are too many for a zip without zip64`);
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.path, "utf8");
    const deflated = deflateRawSync(file.data);
    const stored = deflated.length >= file.data.length;
    const body = stored ? Buffer.from(file.data) : deflated;
    const crc = crc32(file.data);
    if (file.data.length >= LIMIT || offset + body.length >= LIMIT)
      throw new Error(`${file.path}: the bundle is too big for a zip without zip64 (4 GiB)`);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    const entry: Entry = { method: stored ? 0 : 8, crc, size: body.length, length: file.data.length, name };
    writeEntry(local, 6, entry);
    local.writeUInt16LE(0, 28);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, 2.0: the external attributes hold a mode
    header.writeUInt16LE(20, 6);
    writeEntry(header, 8, entry);
    // extra field, comment, disk number, internal attributes: none
    header.writeUInt32LE(((0o100000 | (file.mode & 0o777)) << 16) >>> 0, 38);
    header.writeUInt32LE(offset, 42);
    parts.push(local, name, body);
    central.push(header, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, end]);
}
