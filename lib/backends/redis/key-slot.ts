/** A Redis Cluster's slots: a key's slot is CRC16 (XMODEM) of its hash tag, or of the whole key, mod 16384. */
const SLOTS = 16_384;

const CRC16_TABLE = Uint16Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  return crc & 0xffff;
});

/**
 * @internal The Cluster slot of `key`: the part between the first `{` and the next `}` when that
 * part is not empty (the hash tag), else the whole key, as Redis computes it.
 */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc % SLOTS;
}
