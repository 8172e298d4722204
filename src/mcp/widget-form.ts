// The panel's "add a connector" form, written from the kinds table (each kind's `form`): a
// kind in the table is a kind in the form, with no edit here. A field several kinds share (a
// folder's `path`) is one input shown for each of them.
import type { FormField } from "../connectors/kind";
import { CONNECTOR_KINDS, KINDS } from "../connectors/kinds";

const escapeHtml = (s: string) =>
  s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;");

/** JSON inside a <script>: no `</script>` or `<!--` can close or bend it. */
export const scriptJson = (value: unknown) => JSON.stringify(value).replaceAll("<", "\\u003c");

function input(f: FormField): string {
  const id = `f-${escapeHtml(f.name)}`;
  const name = escapeHtml(f.name);
  const placeholder = f.placeholder ? ` placeholder="${escapeHtml(f.placeholder)}"` : "";
  if (f.input === "json") return `<textarea id="${id}" name="${name}"${placeholder}>${escapeHtml(String(f.initial ?? ""))}</textarea>`;
  if (f.input === "checkbox") return `<input id="${id}" name="${name}" type="checkbox"${f.initial === true ? " checked" : ""}>`;
  const type = f.input === "text" ? "" : ` type="${f.input}"`;
  const value = f.initial !== undefined ? ` value="${escapeHtml(String(f.initial))}"` : "";
  return `<input id="${id}" name="${name}"${type}${value}${placeholder}>`;
}

/** The kind `<select>`'s options, in the table's order. */
export function kindOptionsHtml(): string {
  return CONNECTOR_KINDS.map((k) => `<option value="${escapeHtml(k)}">${escapeHtml(KINDS[k].title)}</option>`).join("");
}

/** Each field once, shown (data-kind) for every kind that has it; the first kind's fields are not hidden. */
export function kindFieldsHtml(): string {
  const fields = new Map<string, { field: FormField; kinds: string[] }>();
  for (const kind of CONNECTOR_KINDS)
    for (const field of KINDS[kind].form) {
      const seen = fields.get(field.name);
      if (seen) seen.kinds.push(kind);
      else fields.set(field.name, { field, kinds: [kind] });
    }
  const first = CONNECTOR_KINDS[0];
  return [...fields.values()]
    .map(
      ({ field, kinds }) =>
        `<div class="kind-fields" data-kind="${escapeHtml(kinds.join(" "))}"${kinds.includes(first) ? "" : " hidden"}>` +
        `<label for="f-${escapeHtml(field.name)}">${escapeHtml(field.label)}</label>${input(field)}</div>`,
    )
    .join("\n  ");
}

/** What the page's script needs to read and fill each kind's fields: names, inputs and labels. */
export function kindForms(): Record<string, Pick<FormField, "name" | "input" | "label">[]> {
  return Object.fromEntries(CONNECTOR_KINDS.map((k) => [k, KINDS[k].form.map(({ name, input, label }) => ({ name, input, label }))]));
}
