/**
 * SQL: the bucket number (epoch seconds / bucket width, floored: buckets are aligned to UTC multiples of the width) of
 * the timestamp column `column`, for `seconds` (a parameter or a literal). date_part, not extract: extract's numeric
 * result made the cold detection read of 10,000 topics x 193 buckets a third slower (3.3 s against 2.2 s in psql).
 */
export const bucketNumberSql = (column: string, seconds: string) => `floor(date_part('epoch', ${column}) / ${seconds})::bigint`;
