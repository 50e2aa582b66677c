// Where a destination's credential may go: an https:// site (plain http only where
// ALLOW_PRIVATE_URLS marks a development setup), refused on site_url when the destination is
// added, and refused again by the publishing clients' fetch for a destination stored before the rule.
import { describe, expect, test } from "bun:test";
import { DomainError } from "../../services/kit/src/errors.ts";
import { checkedDestination, type NewDestination } from "../../services/webhook-dispatcher/src/domain/destinations.ts";
import { guardedFetch, RefusedRequest } from "../../services/webhook-dispatcher/src/publishing/guarded-fetch.ts";

const wordpress = (siteUrl: string): NewDestination => ({
  projectId: 1,
  kind: "wordpress",
  name: "Company blog",
  siteUrl,
  username: "editor",
  credential: "abcd EFGH ijkl MNOP qrst UVWX",
  defaultCategories: [],
  defaultTags: [],
});

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("not refused");
}

describe("a destination's address", () => {
  test("an http:// site is refused on site_url, saying why, unless plain http is allowed", () => {
    const refused = refusal(() => checkedDestination(wordpress("http://blog.example.com"), { allowPlainHttp: false }));
    expect(refused.kind).toBe("invalid");
    expect(refused.fields).toEqual({ site_url: [expect.stringContaining("https://")] });
    expect(refused.fields.site_url![0]).toContain("credential");
    expect(checkedDestination(wordpress("http://blog.example.com"), { allowPlainHttp: true }).siteUrl).toBe("http://blog.example.com");
  });

  test("another scheme is refused naming only the schemes the site may have", () => {
    const httpsOnly = refusal(() => checkedDestination(wordpress("ftp://blog.example.com"), { allowPlainHttp: false }));
    expect(httpsOnly.fields).toEqual({ site_url: ["site_url must be the site's https address: scheme ftp: is not allowed (use https)."] });
    const inDevelopment = refusal(() => checkedDestination(wordpress("ftp://blog.example.com"), { allowPlainHttp: true }));
    expect(inDevelopment.fields).toEqual({ site_url: ["site_url must be the site's https or http address: scheme ftp: is not allowed (use https or http)."] });
    // Too long is said as such, whatever the scheme.
    const long = refusal(() => checkedDestination(wordpress(`http://blog.example.com/${"a".repeat(2000)}`), { allowPlainHttp: false }));
    expect(long.fields).toEqual({ site_url: ["site_url must be the site's https address: longer than 2000 characters."] });
  });

  test("an https:// site is taken either way", () => {
    for (const allowPlainHttp of [false, true]) expect(checkedDestination(wordpress("https://blog.example.com/news"), { allowPlainHttp }).siteUrl).toBe("https://blog.example.com/news");
  });

  test("the publishing clients' fetch sends nothing to a plain http site outside development", async () => {
    let error: unknown;
    try {
      // A name that resolves nowhere: the refusal comes before any lookup or connection.
      await guardedFetch({ allowPrivate: false })("http://blog.invalid/wp-json/wp/v2/users/me", { headers: { authorization: "Basic c2VjcmV0" } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RefusedRequest);
    expect((error as Error).message).toContain("https://");
  });
});
