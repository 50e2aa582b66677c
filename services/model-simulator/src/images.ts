// Image generation answers with real PNGs of exactly the requested size: two bands of colour
// picked from the prompt (the same prompt, the same picture). Flat colour compresses to a few KB,
// so storage stays cheap while sizes are checkable.

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

export const MIN_SIDE = 64;
export const MAX_SIDE = 4096;

/** An RGB PNG: the top half `top`, the bottom half `bottom`. */
export function bandedPng(width: number, height: number, top: [number, number, number], bottom: [number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type: truecolour
  const rowOf = (rgb: [number, number, number]) => {
    const row = Buffer.alloc(1 + width * 3); // leading 0 = no filter
    for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3);
    return row;
  };
  const rows = [rowOf(top), rowOf(bottom)];
  const pixels = Buffer.concat(Array.from({ length: height }, (_, y) => rows[y < height / 2 ? 0 : 1]!));
  return Buffer.concat([PNG_SIGNATURE, chunk("IHDR", header), chunk("IDAT", deflateSync(pixels)), chunk("IEND", Buffer.alloc(0))]);
}

/** "1536x1024" → its width and height, when both are from MIN_SIDE to MAX_SIDE pixels. */
export function imageSizeOf(size: unknown): { width: number; height: number } | undefined {
  const match = typeof size === "string" ? /^(\d{1,5})x(\d{1,5})$/.exec(size) : null;
  if (!match) return undefined;
  const [width, height] = [Number(match[1]), Number(match[2])];
  const fits = (side: number) => side >= MIN_SIDE && side <= MAX_SIDE;
  return fits(width) && fits(height) ? { width, height } : undefined;
}

/** `n` images for a prompt at the given size: the same prompt always gets the same colours. */
export function generateImages(prompt: string, n: number, size: { width: number; height: number }): { b64_json: string; revised_prompt: string }[] {
  const dice = diceFor(prompt);
  const colour = (): [number, number, number] => [dice.between(40, 215), dice.between(40, 215), dice.between(40, 215)];
  return Array.from({ length: n }, () => ({ b64_json: bandedPng(size.width, size.height, colour(), colour()).toString("base64"), revised_prompt: prompt }));
}
