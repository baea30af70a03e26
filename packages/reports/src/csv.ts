import { stringify, type Stringifier } from "csv-stringify";
import { REPORT_COLUMNS, type ReportOutputRow } from "@trendgate/contracts";

// CSV through csv-stringify: RFC 4180 quoting, and formula escaping (a cell starting with =, +, -, @, tab or CR gets
// a leading ') so a campaign named "=HYPERLINK(...)" cannot run in a spreadsheet. Numbers are safe as they are:
// escaping applies to strings, and our numeric columns are written as numbers or digit strings.

export const csvStringifier = (): Stringifier => stringify({ header: true, columns: [...REPORT_COLUMNS], escape_formulas: true, cast: { boolean: (v) => String(v) } });

/** A row in column order (null as an empty cell). */
export const csvRecord = (r: ReportOutputRow): Record<string, unknown> => r;
