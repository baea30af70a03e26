import { Readable, Writable } from "node:stream";
import type { Db } from "@trendgate/db";

// An export's CSV is stored in Postgres in chunks (report_export_chunks), so any gateway can serve a file any worker
// wrote, and a download reads one chunk at a time. The writer is a stream sink: it holds at most one chunk, and
// its write callback waits for the insert, which is what pushes backpressure up to the providers' pages. Chunks go
// through the pg pool directly (bytes as bytes), not through Prisma's query engine, whose per-call conversions of
// a megabyte of bytea showed up as resident memory growing with the export's size.

export class ChunkWriter extends Writable {
  private parts: Buffer[] = [];
  private size = 0;
  private seq = 0;
  bytes = 0;

  constructor(private readonly db: Db, private readonly exportId: string, private readonly chunkBytes: number, private readonly onChunk: (bytes: number) => Promise<void>) {
    super();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void) {
    this.parts.push(chunk);
    this.size += chunk.length;
    if (this.size < this.chunkBytes) return done();
    this.flush().then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void) {
    this.flush().then(() => done(), done);
  }

  private async flush() {
    if (!this.size) return;
    const data = Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    await this.db.$pool.query("INSERT INTO report_export_chunks (export_id, seq, data) VALUES ($1, $2, $3)", [this.exportId, this.seq++, data]);
    this.bytes += data.length;
    await this.onChunk(this.bytes);
  }
}

/** The stored file, chunk by chunk (one in memory at a time); destroying the stream stops the reads. */
export function chunkReader(db: Db, exportId: string): Readable {
  return Readable.from((async function* () {
    for (let seq = 0; ; seq++) {
      const { rows } = await db.$pool.query<{ data: Buffer }>("SELECT data FROM report_export_chunks WHERE export_id = $1 AND seq = $2", [exportId, seq]);
      if (!rows.length) return;
      yield rows[0].data;
    }
  })(), { objectMode: false });
}
