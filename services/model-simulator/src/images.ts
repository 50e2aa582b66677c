// Image generation answers with tiny solid-colour PNGs: real, decodable files with the requested
// aspect ratio, small enough to keep tests and storage cheap.

import { deflateSync } from "node:zlib";
import { diceFor } from "./prompt-seed.ts";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** An RGB PNG of one colour. */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: truecolour
  const row = Buffer.alloc(1 + width * 3); // leading 0 = no filter
  for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([PNG_SIGNATURE, chunk("IHDR", header), chunk("IDAT", deflateSync(pixels)), chunk("IEND", Buffer.alloc(0))]);
}

/** "1792x1024" → 32×18: the requested shape with its longest side cut to 32 pixels. */
export function thumbnailSize(size: unknown): { width: number; height: number } {
  const match = typeof size === "string" ? /^(\d+)x(\d+)$/.exec(size) : null;
  const width = match ? Number(match[1]) : 1024;
  const height = match ? Number(match[2]) : 1024;
  const scale = Math.max(width, height) / 32;
  return { width: Math.max(1, Math.round(width / scale)), height: Math.max(1, Math.round(height / scale)) };
}

/** `n` images for a prompt: the same prompt always gets the same colours. */
export function generateImages(prompt: string, n: number, size: unknown): { b64_json: string; revised_prompt: string }[] {
  const { width, height } = thumbnailSize(size);
  const dice = diceFor(prompt);
  return Array.from({ length: n }, () => {
    const rgb: [number, number, number] = [dice.between(40, 215), dice.between(40, 215), dice.between(40, 215)];
    return { b64_json: solidPng(width, height, rgb).toString("base64"), revised_prompt: prompt };
  });
}
