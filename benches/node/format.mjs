// readArchive, as the producer's diff.mjs uses it, written from SPEC.md
// for benches/node/run.sh (the seed does not include format.mjs): the
// records of an archive file, one per LF-terminated line, parsed with
// JSON.parse. It checks the framing it needs and the closing line's
// archiveHash (SPEC.md §7.1, with node's native SHA-256); it does not
// check the contentHash, the row rules or canonical form, so it does less
// than `ndarc diff` (which verifies every rule): the ratio it gives is a
// lower bound.
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';

export async function* readArchive(path) {
  const outer = createHash('sha256');
  let pending = [];
  let pendingBytes = 0;
  let closing = null;
  const line = function* (buf) {
    if (closing) throw new Error('bytes after the closing line');
    const record = JSON.parse(buf.toString('utf8'));
    if (record.kind === 'closing') {
      const got = outer.digest('hex');
      if (got !== record.archiveHash) throw new Error('archiveHash mismatch');
      closing = record;
    } else {
      outer.update(createHash('sha256').update(buf).digest());
    }
    yield record;
  };
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    let start = 0;
    for (;;) {
      const lf = chunk.indexOf(10, start);
      if (lf < 0) break;
      const piece = chunk.subarray(start, lf);
      const buf = pending.length ? Buffer.concat([...pending, piece], pendingBytes + piece.length) : piece;
      pending = [];
      pendingBytes = 0;
      yield* line(buf);
      start = lf + 1;
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
    }
  }
  if (pendingBytes) throw new Error('the last line has no LF');
  if (!closing) throw new Error('no closing line');
}
