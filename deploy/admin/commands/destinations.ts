// Operator commands of webhook-dispatcher's publishing: a project's destinations (WordPress, Ghost)
// and the publication of an article to one of them.
import { envOptional } from "../../../services/kit/src/config.ts";
import {
  CreateDestinationResponseSchema,
  ListDestinationsResponseSchema,
  PublishArticleResponseSchema,
} from "../../../proto/gen/articles/webhook_dispatcher/v1/publishing_pb.ts";
import { UsageError, flag, id, int, optionalFlag, required, timestamp, type Flags } from "../args.ts";
import { command, type AdminCommand } from "../command.ts";
import { asJson } from "../json-output.ts";

const KINDS = ["wordpress", "ghost"];

/** Where `destination add` reads the credential from (never a flag: shell history and ps would show it). */
const CREDENTIAL_VARIABLE = "DESTINATION_CREDENTIAL";

// The site gets 30 s for each of the check's requests (its REST root, then the user), longer than
// the CLI's usual 10 s deadline: a slow site is answered as a problem, not cut off as DEADLINE_EXCEEDED.
const CHECK_TIMEOUT_MS = 65_000;
// Adding one waits on the site's first contact, which the service cuts off at 10 s.
const ADD_TIMEOUT_MS = 20_000;

/**
 * A comma-separated list of names (the parser takes each flag once); undefined when the flag is
 * not given, [] when it is given empty. The service checks each name's length and the count.
 */
function names<N extends string>(f: Flags<N>, name: NoInfer<N>): string[] | undefined {
  const value = f[name];
  if (value === undefined) return undefined;
  return value.trim() === "" ? [] : value.split(",").map((n) => n.trim());
}

/** The first line of standard input, without waiting for more once it has come. */
async function firstLine(): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  const reader = Bun.stdin.stream().getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text + decoder.decode();
      text += decoder.decode(value, { stream: true });
      const end = text.search(/\r?\n/);
      if (end >= 0) return text.slice(0, end);
    }
  } finally {
    // Let go of standard input, so a pipe that stays open after the line does not keep the CLI running.
    await reader.cancel();
  }
}

/**
 * A line typed at the terminal with echo off, so the credential is not left on the screen. Enter
 * ends it, Backspace deletes, Ctrl-C quits (exit 130), Ctrl-D on nothing gives an empty line.
 */
function hiddenLine(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  return new Promise((resolve) => {
    let line = "";
    const finish = (after: () => void) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      after();
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\r" || char === "\n" || (char === "\u0004" && line === "")) return finish(() => resolve(line));
        if (char === "\u0003") return finish(() => process.exit(130));
        if (char === "\u007f" || char === "\b") line = [...line].slice(0, -1).join("");
        else if (char >= " ") line += char;
      }
    };
    stdin.on("data", onData);
    stdin.resume();
  });
}

/** DESTINATION_CREDENTIAL, else the first line of standard input (asked for without echo on a terminal); trimmed. */
async function credential(): Promise<string> {
  const given = envOptional(process.env, CREDENTIAL_VARIABLE);
  if (given !== undefined) return given;
  const line = process.stdin.isTTY ? await hiddenLine("credential (application password or Admin API key; not shown): ") : await firstLine();
  // Left empty, the service refuses it with its own message, naming what the credential must be.
  return line.trim();
}

export const destinationCommands: AdminCommand[] = [
  command({
    name: "destination add",
    flags: [
      flag("project", "ID"),
      flag("kind", "wordpress|ghost"),
      flag("name", "N"),
      flag("site-url", "URL"),
      optionalFlag("username", "U"),
      optionalFlag("default-status", "S"),
      optionalFlag("categories", "A,B"),
      optionalFlag("tags", "A,B"),
      optionalFlag("author-id", "N"),
    ],
    summary:
      `add a publishing destination to a project (--username: the WordPress login; lists comma-separated). The credential (WordPress application password, ` +
      `Ghost Admin API key) is read from ${CREDENTIAL_VARIABLE}, else the first line of standard input (a prompt without echo on a terminal); it is never printed. ` +
      "The site is asked first: a credential it refuses fails the command (INVALID_ARGUMENT on credential); a site that cannot be reached still gets the destination, with warnings",
    run: async (f, c) => {
      const kind = required(f, "kind");
      if (!KINDS.includes(kind)) throw new UsageError(`--kind must be ${KINDS.join(" or ")}, got "${kind}"`);
      const authorId = int(f, "author-id");
      // Every flag is read before the credential, so a mistake in them is reported before anyone types or pipes it.
      const request = {
        projectId: id(f, "project"),
        kind,
        name: required(f, "name"),
        siteUrl: required(f, "site-url"),
        username: f.username,
        defaultStatus: f["default-status"],
        defaultCategories: names(f, "categories") ?? [],
        defaultTags: names(f, "tags") ?? [],
        authorId: authorId === undefined ? undefined : BigInt(authorId),
      };
      // The service tries the credential against the site first (up to 10 s), longer than the CLI's usual deadline.
      const reply = asJson(CreateDestinationResponseSchema, await c.publishing.createDestination({ ...request, credential: await credential() }, { timeoutMs: ADD_TIMEOUT_MS }));
      for (const warning of reply.warnings ?? []) console.error(`destination added with a warning: ${warning}`);
      return { ...reply.destination, warnings: reply.warnings ?? [] };
    },
  }),
  command({
    name: "destination list",
    flags: [flag("project", "ID")],
    summary: "the project's publishing destinations, oldest first (never their credentials)",
    run: async (f, c) => asJson(ListDestinationsResponseSchema, await c.publishing.listDestinations({ projectId: id(f, "project") })).destinations,
  }),
  command({
    name: "destination check",
    flags: [flag("project", "ID"), flag("destination", "ID")],
    summary: "connect to the site with the stored credential: reachable, accepted, allowed to post. A failed check still exits 0, with ok false, its problems and a line on stderr",
    run: async (f, c) => {
      const projectId = id(f, "project");
      const destinationId = id(f, "destination");
      const reply = await c.publishing.checkDestination({ projectId, destinationId }, { timeoutMs: CHECK_TIMEOUT_MS });
      // The check answered, so the command succeeded; a script reads ok, and a person reads stderr.
      if (!reply.ok) console.error(`destination ${destinationId}: the check failed; nothing can be published there until its problems are fixed`);
      return {
        project_id: Number(projectId),
        destination_id: Number(destinationId),
        ok: reply.ok,
        problems: reply.problems,
        user_name: reply.userName ?? null,
        can_create_posts: reply.canCreatePosts,
        can_publish_posts: reply.canPublishPosts,
        can_upload_media: reply.canUploadMedia,
      };
    },
  }),
  command({
    name: "destination remove",
    flags: [flag("project", "ID"), flag("destination", "ID")],
    summary: "delete a destination and its credential (posts already published stay on the site)",
    run: async (f, c) => {
      const projectId = id(f, "project");
      const destinationId = id(f, "destination");
      const reply = await c.publishing.deleteDestination({ projectId, destinationId });
      return { project_id: Number(projectId), destination_id: Number(destinationId), removed: reply.deleted };
    },
  }),
  command({
    name: "article publish",
    flags: [
      flag("project", "ID"),
      flag("article", "UUID"),
      flag("destination", "ID"),
      optionalFlag("status", "S"),
      optionalFlag("publish-at", "ISO8601"),
      optionalFlag("categories", "A,B"),
      optionalFlag("tags", "A,B"),
      optionalFlag("slug", "S"),
    ],
    summary:
      "queue the article's publication to a destination of its project (an update of its post when published there before); options left out take the " +
      'destination\'s defaults, lists are comma-separated ("" for none). Follow it with article show',
    run: async (f, c) => {
      const categories = names(f, "categories");
      const tags = names(f, "tags");
      const externalId = required(f, "article");
      const reply = await c.publishing.publishArticle({
        projectId: id(f, "project"),
        externalId,
        destinationId: id(f, "destination"),
        options: {
          status: f.status,
          publishAt: timestamp(f, "publish-at"),
          categories: categories === undefined ? undefined : { names: categories },
          tags: tags === undefined ? undefined : { names: tags },
          slug: f.slug,
        },
      });
      return { external_id: externalId, queued: true, destination: asJson(PublishArticleResponseSchema, reply).destination };
    },
  }),
];
