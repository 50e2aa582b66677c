// Operator commands of article-store: the style records of a project that articles reference
// (brand voices, image presets), a look at one article with its generation settings, and an
// article's erasure on request.
import {
  CreateBrandVoiceResponseSchema,
  CreateImagePresetResponseSchema,
  GetArticleResponseSchema,
  GetBrandVoiceResponseSchema,
  GetImagePresetResponseSchema,
} from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { Code, ConnectError } from "@connectrpc/connect";
import { ArticleErasureSchema } from "../../../proto/gen/articles/article_store/v1/erasure_pb.ts";
import { eraseArticleEverywhere } from "../../../services/kit/src/article-erasure-steps.ts";
import { flag, id, required, switchFlag } from "../args.ts";
import { command, type AdminCommand } from "../command.ts";
import { asJson } from "../json-output.ts";

export const articleCommands: AdminCommand[] = [
  command({
    name: "brand-voice create",
    flags: [flag("project", "ID"), flag("name", "N"), flag("description", "TEXT")],
    summary: "create a brand voice in a project (articles of that project may use it as brand_voice_id)",
    run: async (f, c) =>
      asJson(CreateBrandVoiceResponseSchema, await c.articles.createBrandVoice({ projectId: id(f, "project"), name: required(f, "name"), description: required(f, "description") })).brand_voice,
  }),
  command({
    name: "brand-voice show",
    flags: [flag("id", "ID")],
    summary: "show a brand voice",
    run: async (f, c) => asJson(GetBrandVoiceResponseSchema, await c.articles.getBrandVoice({ brandVoiceId: id(f, "id") })).brand_voice,
  }),
  command({
    name: "image-preset create",
    flags: [flag("project", "ID"), flag("name", "N"), flag("style", "TEXT")],
    summary: "create an image preset in a project (articles of that project may use it as image_preset_id)",
    run: async (f, c) =>
      asJson(CreateImagePresetResponseSchema, await c.articles.createImagePreset({ projectId: id(f, "project"), name: required(f, "name"), style: required(f, "style") })).image_preset,
  }),
  command({
    name: "image-preset show",
    flags: [flag("id", "ID")],
    summary: "show an image preset",
    run: async (f, c) => asJson(GetImagePresetResponseSchema, await c.articles.getImagePreset({ imagePresetId: id(f, "id") })).image_preset,
  }),
  command({
    name: "article show",
    flags: [flag("id", "ID|UUID")],
    summary: "show an article with its generation settings and failure or delivery records",
    run: async (f, c) => asJson(GetArticleResponseSchema, await c.articles.getArticle({ identifier: required(f, "id") })).article,
  }),
  command({
    name: "article erase",
    flags: [flag("id", "ID|UUID"), switchFlag("unpublish")],
    summary: "erase an article on request, as DELETE /v1/articles/{id} does (a running one is cancelled; --unpublish deletes its WordPress and Ghost posts first); prints the erasure record that stays",
    async run(f, c) {
      const identifier = required(f, "id");
      const found = await c.articles.getArticle({ identifier }).catch((error) => {
        if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
        throw error;
      });
      // Erased before: the record made then.
      const unpublish = f.unpublish === "true";
      const erasure = found?.article ? await eraseArticleEverywhere(c.erasureClients, found.article, 0, { unpublish }) : (await c.erasureClients.erasure.findErasure({ identifier })).erasure!;
      return asJson(ArticleErasureSchema, erasure);
    },
  }),
];
