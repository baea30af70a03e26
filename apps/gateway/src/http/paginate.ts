/**
 * Keyset pagination for every list endpoint: ids are time-ordered, so "newest first, after cursor X" is `id < X`.
 * Fetches one row more than the page to know whether a next page exists.
 */
export async function keysetPage<R, T extends { id: string }>(
  query: { limit: number; cursor?: string },
  fetch: (page: { after: { id?: { lt: string } }; orderBy: { id: "desc" }; take: number }) => Promise<R[]>,
  map: (row: R) => T,
): Promise<{ data: T[]; next_cursor: string | null }> {
  const rows = await fetch({ after: query.cursor ? { id: { lt: query.cursor } } : {}, orderBy: { id: "desc" }, take: query.limit + 1 });
  const data = rows.slice(0, query.limit).map(map);
  return { data, next_cursor: rows.length > query.limit ? data.at(-1)!.id : null };
}
