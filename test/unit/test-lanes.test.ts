// The suite runs in lanes (docs/development.md): the unit lane, the stack lane (whole-stack and
// browser files) and the fleet lane (files that drain 1,000 or more articles or soak). `npm test`
// is the unit and stack lanes, `.ci/run` runs `npm test` and the fleet lane: a test file outside
// every lane's folder would run nowhere, and one in two folders' reach would run twice.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { Glob } from "bun";

const scripts: Record<string, string> = JSON.parse(readFileSync("package.json", "utf8")).scripts;
const LANES = { unit: "test:unit", fleet: "test:fleet" } as const;
const folders = (command: string) => command.split(" ").filter((word) => word.startsWith("test/"));

test("every test file is in exactly one lane's folder, and CI runs every lane", () => {
  const laneFolders = [...folders(scripts.test!), ...folders(scripts[LANES.fleet]!)];
  expect(folders(scripts[LANES.unit]!)).toEqual(["test/unit"]);
  expect(folders(scripts.test!)).toContain("test/unit");
  const files = [...new Glob("test/**/*.test.ts").scanSync(".")];
  expect(files.length).toBeGreaterThan(100);
  for (const file of files) {
    const lanes = laneFolders.filter((folder) => file.startsWith(`${folder}/`));
    expect({ file, lanes: lanes.length }).toEqual({ file, lanes: 1 });
  }
  const ci = readFileSync(".ci/run", "utf8");
  expect(ci).toContain("npm test ");
  expect(ci).toContain(`npm run ${LANES.fleet} `);
});
