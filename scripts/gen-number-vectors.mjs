// Regenerates testdata/json/numbers.csv: `hex-bits,expected` where expected is
// ECMAScript Number::toString of the IEEE-754 double with those bits.
// Usage: node scripts/gen-number-vectors.mjs > testdata/json/numbers.csv
// Deterministic: a fixed-seed xorshift PRNG, so the file is reproducible.
let s0 = 0x9e3779b97f4a7c15n, s1 = 0xbf58476d1ce4e5b9n;
const M = (1n << 64n) - 1n;
function next() { // xorshift128+
  let x = s0; const y = s1; s0 = y;
  x ^= (x << 23n) & M; x ^= x >> 17n; x ^= y ^ (y >> 26n); s1 = x;
  return (s0 + s1) & M;
}
const buf = new DataView(new ArrayBuffer(8));
const out = [];
function emit(d) {
  if (!Number.isFinite(d)) return;
  buf.setFloat64(0, d);
  out.push(buf.getBigUint64(0).toString(16).padStart(16, '0') + ',' + String(d));
}
const edge = [0, -0, 1, -1, 1e21, 1e-7, 123e-9, 5e-324, -5e-324, 1.7976931348623157e308,
  -1.7976931348623157e308, 2 ** 53, 2 ** 53 - 1, -(2 ** 53), 0.1 + 0.2, 0.1, 1e20, 1e-6,
  999999999999999900000, 1e+21 - 65536, 2.2250738585072014e-308, 2.225073858507201e-308,
  4.35, 0.000001, 0.0000001, 1.5e-7, 123456789012345680000, 9007199254740993, 1e300, 1e-300,
  333333333.3333333, 2 ** -1074, 2 ** 1023, 0.5, 100, 1e2, 12345e-10];
for (const d of edge) emit(d);
for (let e = -330; e <= 310; e++) { emit(Number('1e' + e)); emit(Number('9.999999999999999e' + e)); }
for (let i = 0; i < 80000; i++) { // random bit patterns
  const bits = next();
  buf.setBigUint64(0, bits);
  emit(buf.getFloat64(0));
}
for (let i = 0; i < 30000; i++) { // random decimals with few digits, the common case in data
  const digits = Number(next() % 1000000n);
  const exp = Number(next() % 60n) - 30;
  emit(Number(digits + 'e' + exp) * (next() & 1n ? 1 : -1));
}
for (let i = 0; i < 10000; i++) { // integers, safe and beyond
  const v = Number(next() >> BigInt(Number(next() % 64n)));
  emit(v); emit(-v);
}
process.stdout.write(out.join('\n') + '\n');
