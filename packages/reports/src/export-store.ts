import { Readable, Writable } from "node:stream";
import type { Db } from "@trendgate/db";

// An export's CSV is stored in Postgres in chunks (report_export_chunks), so any gateway can serve a file any worker
// wrote, and a download reads one chunk at a time. The writer is a stream sink: it holds at most one chunk, and
// its write callback waits for the insert, which is what pushes backpressure up to the providers' pages.

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
    await this.db.reportExportChunk.create({ data: { exportId: this.exportId, seq: this.seq++, data } });
    this.bytes += data.length;
    await this.onChunk(this.bytes);
  }
}

/** The stored file, chunk by chunk (one in memory at a time); destroying the stream stops the reads. */
export function chunkReader(db: Db, exportId: string): Readable {
  return Readable.from((async function* () {
    for (let seq = 0; ; seq++) {
      const c = await db.reportExportChunk.findUnique({ where: { exportId_seq: { exportId, seq } }, select: { data: true } });
      if (!c) return;
      yield Buffer.from(c.data);
    }
  })(), { objectMode: false });
}
