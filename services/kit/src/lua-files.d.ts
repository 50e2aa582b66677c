// Lua scripts are kept in .lua files and imported as text (`with { type: "text" }`); Bun's
// bundler inlines them, so a bundled process needs no file beside it.
declare module "*.lua" {
  const source: string;
  export default source;
}
