// The two rules every list and every path identifier is read with (services/kit/src/rules/):
// nothing in a page window is refused, and a number with leading zeros names the same record.
import { describe, expect, test } from "bun:test";
import { MAX_PAGE, pageMeta, pageWindow } from "../../services/kit/src/rules/page-window.ts";
import { articleIdentifier, canonicalIdentifier, numericId } from "../../services/kit/src/rules/identifiers.ts";

describe("pageWindow", () => {
  test("a page below 1 or not an integer reads page 1; past the last page a request can name, that page", () => {
    for (const page of [undefined, null, "", "0", "-4", "x", "1.5", "1e3", 0, -2, 1.5]) expect(pageWindow(page, undefined).page).toBe(1);
    expect(pageWindow("7", undefined).page).toBe(7);
    expect(pageWindow(" 7 ", undefined).page).toBe(7);
    expect(pageWindow("99999999999999999999999", undefined).page).toBe(MAX_PAGE);
  });

  test("per_page below 1 or not an integer takes the default, above 100 the maximum", () => {
    for (const perPage of [undefined, null, "", "0", "-1", "x", 0, -5]) expect(pageWindow(undefined, perPage).perPage).toBe(20);
    for (const [perPage, used] of [["1", 1], ["100", 100], ["101", 100], [500, 100], ["1000000000000", 100]] as const) expect(pageWindow(undefined, perPage).perPage).toBe(used);
  });

  test("meta: last_page is at least 1", () => {
    expect(pageMeta({ page: 1, perPage: 20 }, 0)).toEqual({ current_page: 1, last_page: 1, per_page: 20, total: 0 });
    expect(pageMeta({ page: 3, perPage: 2 }, 5)).toEqual({ current_page: 3, last_page: 3, per_page: 2, total: 5 });
  });
});

describe("identifiers", () => {
  test("a number, leading zeros included, is its number; anything else names nothing", () => {
    expect(numericId("2")).toBe(2);
    expect(numericId("002")).toBe(2);
    expect(numericId(`${"0".repeat(40)}15`)).toBe(15);
    for (const junk of ["0", "000", "", "-1", "+1", "1.0", "1e3", " 1", "0x10", "99999999999999999"]) expect(numericId(junk)).toBeNull();
  });

  test("an article is named by its number or its UUID in any case, in one spelling", () => {
    const uuid = "3F1C2A9E-8D0B-4A57-9B1E-2F6F8B8F0C11";
    expect(articleIdentifier(uuid)).toEqual({ externalId: uuid.toLowerCase() });
    expect(canonicalIdentifier(articleIdentifier("0042")!)).toBe("42");
    expect(canonicalIdentifier(articleIdentifier(uuid)!)).toBe(uuid.toLowerCase());
    expect(articleIdentifier("3f1c2a9e-8d0b-4a57-9b1e-2f6f8b8f0c1g")).toBeNull();
  });
});
