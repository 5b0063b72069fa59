// The two functions of the producer's hash.mjs that its diff.mjs imports,
// written from SPEC.md §3.2 for benches/node/run.sh (the seed does not
// include hash.mjs). canonicalJson is RFC 8785 (JCS): JSON.stringify
// already writes numbers and strings as JCS does; members are sorted by
// UTF-16 code units, which is JavaScript's default string order.
import { createHash } from 'node:crypto';

export function canonicalJson(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return '[' + value.map(canonicalJson).join(',') + ']';
  const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + canonicalJson(value[k])).join(',') + '}';
}

export function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}
