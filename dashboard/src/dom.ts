// Builds the page from elements and text nodes only: nothing a tenant or a model wrote is ever
// parsed as HTML (no innerHTML anywhere), so a title carrying <script> shows as those characters.
export type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === "function") el.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) el.setAttribute(name, "");
    else if (value !== false && value !== null && value !== undefined) el.setAttribute(name, String(value));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

const SVG = "http://www.w3.org/2000/svg";
export function svg(tag: string, attrs: Record<string, string | number>, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  append(el, ...children);
  return el;
}

/** Replaces the main region's content and moves focus to its heading, for keyboard and screen-reader users. */
export function show(...children: Child[]): void {
  const main = document.getElementById("main")!;
  main.replaceChildren();
  append(main, ...children);
  const heading = main.querySelector("h1");
  if (heading) {
    heading.setAttribute("tabindex", "-1");
    heading.focus();
  }
}

export function say(message: string): void {
  document.getElementById("status")!.textContent = message;
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "—");

/** A labelled field: the label wraps its control, so the control's accessible name is the label's text. */
export function field(label: string, control: HTMLElement): HTMLLabelElement {
  return h("label", {}, h("span", {}, label), control);
}

export function errorsOf(body: any): string {
  if (!body || typeof body !== "object") return "Something went wrong.";
  const details = body.errors && typeof body.errors === "object" ? Object.values(body.errors).flat().join(" ") : "";
  // The message summarises the field errors ("… (and 2 more errors)"): the errors themselves say it all.
  return details || String(body.message ?? "Something went wrong.");
}

/**
 * A form whose submission runs `submit` (the page is not reloaded); what `submit` returns, when
 * anything, is shown in the form's alert line as an error.
 */
export function form(submit: () => Promise<string | void>, ...children: Child[]): HTMLFormElement {
  const error = h("p", { class: "error", role: "alert" });
  return h(
    "form",
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        error.textContent = "";
        error.textContent = (await submit()) ?? "";
      },
    },
    ...children,
    error,
  );
}
