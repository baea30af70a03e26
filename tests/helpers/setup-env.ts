// Runs before each test file: point it (and any process it spawns) at this jest worker's own database copy.
// (Pure tests run without a database; then there is nothing to point.)
if (process.env.DATABASE_URL) {
  const url = new URL(process.env.DATABASE_URL);
  if (!/_w\d+$/.test(url.pathname)) {
    url.pathname = `${url.pathname}_w${process.env.JEST_WORKER_ID ?? "1"}`;
    process.env.DATABASE_URL = url.href;
  }
}
