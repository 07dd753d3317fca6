// Which b-trees a SQLite WAL's frames rewrote: each frame is a page a commit wrote, and a commit
// writes every page it changed. Read from the WAL file as it stands: the frames written since the
// WAL last started over, each page named by the table or index that owns it (SQLite's dbstat table).
import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/**
 * The frames of `file`'s WAL, by the b-tree of each frame's page ("(interior)" for its inner
 * pages), most first: `{ frames, trees: [{ name, frames, pages }] }`, `pages` the distinct ones.
 * A WAL that starts over is written again from its beginning, not cut short: the frames of its
 * current run are those whose salts are its header's, up to the first that is not.
 */
export function walFramesByTree(file) {
  const wal = existsSync(`${file}-wal`) ? readFileSync(`${file}-wal`) : Buffer.alloc(0);
  if (wal.length < WAL_HEADER) return { frames: 0, trees: [] };
  const pageSize = wal.readUInt32BE(8);
  const salts = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  const framesOfPage = new Map();
  let frames = 0;
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salts[0] || wal.readUInt32BE(at + 12) !== salts[1]) break;
    const page = wal.readUInt32BE(at);
    frames++;
    framesOfPage.set(page, (framesOfPage.get(page) ?? 0) + 1);
  }
  const db = new Database(file, { readonly: true });
  let owner;
  try {
    owner = new Map(
      db
        .prepare('SELECT name, pageno, pagetype FROM dbstat')
        .all()
        .map((p) => [p.pageno, p.pagetype === 'internal' ? `${p.name} (interior)` : p.name]),
    );
  } finally {
    db.close();
  }
  const trees = new Map();
  for (const [page, n] of framesOfPage) {
    const name = owner.get(page) ?? '(free or overflow)';
    const tree = trees.get(name) ?? { name, frames: 0, pages: 0 };
    tree.frames += n;
    tree.pages += 1;
    trees.set(name, tree);
  }
  return { frames, trees: [...trees.values()].sort((a, b) => b.frames - a.frames) };
}
