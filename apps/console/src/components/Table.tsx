import type { ComponentChildren } from "preact";
import { Fragment } from "preact";

export interface Column<T> {
  label: string;
  cell: (row: T) => ComponentChildren;
  /** Right-aligned numbers. */
  numeric?: boolean;
  class?: string;
}

/**
 * A data table with a caption and column headers, in a scrollable region on narrow screens. `expanded` renders a
 * full-width row under a row (details opened by a button in one of the cells).
 */
export function Table<T>({ caption, columns, rows, rowKey, expanded, captionHidden = false }: {
  caption: string; columns: Column<T>[]; rows: T[]; rowKey: (row: T) => string;
  expanded?: (row: T) => ComponentChildren | null; captionHidden?: boolean;
}) {
  return (
    <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
      <table>
        <caption class={captionHidden ? "visually-hidden" : undefined}>{caption}</caption>
        <thead>
          <tr>{columns.map((c) => <th scope="col" key={c.label} class={c.numeric ? "num" : c.class}>{c.label}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const key = rowKey(r);
            const more = expanded?.(r);
            return (
              <Fragment key={key}>
                <tr>{columns.map((c) => <td key={c.label} data-label={c.label} class={c.numeric ? "num" : c.class}>{c.cell(r)}</td>)}</tr>
                {more && <tr class="row-details"><td colSpan={columns.length} id={`details-${key}`}>{more}</td></tr>}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
