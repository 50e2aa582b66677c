// Text going into a field a site keeps as HTML. WordPress stores a post's title and excerpt, and a
// media item's title, as markup it prints unescaped, and for an administrator (unfiltered_html) it
// filters none of it: text sent as is would run as markup on the site. Escaped, it shows as the
// text it is, `<script>` included. Ghost's title, excerpt and alt text are plain text and go as is.

/** `text` with the characters that open markup or an entity escaped. */
export const htmlText = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
