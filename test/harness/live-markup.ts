// Whether markup a model wrote would run in a reader's browser once a site shows it: the HTML is
// parsed (Bun's HTMLRewriter, an HTML5 tokenizer) rather than searched, so text that merely reads
// like markup (`&lt;script&gt;`, an alt text saying `onerror=`) is not taken for it. The hostile
// payloads of the tests all call `alert(`, which is how their markup is told from a site's own
// scripts and handlers on a whole page.

const PAYLOAD = "alert(";
// Script types a browser runs; a data block such as application/ld+json is not run.
const RUNS = /^(|text\/javascript|application\/javascript|module)$/i;
const URL_ATTRIBUTES = new Set(["href", "src", "action", "formaction", "xlink:href", "data"]);

/** What in `html` would run a payload: script elements, event handler attributes and javascript: URLs, each named. */
export async function liveMarkup(html: string): Promise<string[]> {
  const found: string[] = [];
  let inRunningScript = false;
  // A script's text may come in several chunks.
  let scriptText = "";
  const rewriter = new HTMLRewriter()
    .on("*", {
      element(element) {
        for (const [name, value] of element.attributes) {
          if (!value.includes(PAYLOAD)) continue;
          if (/^on/i.test(name)) found.push(`<${element.tagName} ${name}>`);
          // Browsers drop whitespace and control characters before the scheme.
          if (URL_ATTRIBUTES.has(name.toLowerCase()) && /^[\s\x00-\x20]*javascript:/i.test(value)) found.push(`<${element.tagName} ${name}="javascript:…">`);
        }
      },
    })
    .on("script", {
      element(element) {
        inRunningScript = RUNS.test((element.getAttribute("type") ?? "").trim());
        scriptText = "";
      },
      text(text) {
        if (!inRunningScript) return;
        scriptText += text.text;
        if (text.lastInTextNode && scriptText.includes(PAYLOAD)) found.push("<script> running the payload");
      },
    });
  await rewriter.transform(new Response(html)).text();
  return [...new Set(found)];
}
