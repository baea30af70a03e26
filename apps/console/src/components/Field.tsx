import type { ComponentChildren, VNode } from "preact";

export interface FieldA11y { id: string; "aria-invalid"?: true; "aria-describedby"?: string }

/**
 * A labelled form control with its hint and its validation error. `children` renders the control with the
 * attributes given (id, aria-invalid, aria-describedby), so the label, hint and error are tied to it.
 */
export function Field({ id, label, hint, error, children, class: cls }: {
  id: string; label: ComponentChildren; hint?: ComponentChildren; error?: string; class?: string;
  children: (a: FieldA11y) => VNode;
}) {
  const describedBy = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div class={`field${error ? " field-invalid" : ""}${cls ? ` ${cls}` : ""}`}>
      <label for={id}>{label}</label>
      {children({ id, ...(error ? { "aria-invalid": true as const } : {}), ...(describedBy ? { "aria-describedby": describedBy } : {}) })}
      {hint && <p class="hint" id={`${id}-hint`}>{hint}</p>}
      {error && <p class="field-error" id={`${id}-error`}>{error}</p>}
    </div>
  );
}
