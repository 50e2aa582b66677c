// The chat completions endpoint as a plain function, shared by the HTTP route and the batch runner.

import { countTokens, countWords } from "../../kit/src/words.ts";
import { CallCounter } from "./call-counter.ts";
import { readDirectives, withoutDirectives } from "./directives.ts";
import { jsonFromSchema, smallJsonObject, type JsonSchema } from "./json-from-schema.ts";
import { openAIErrorBody } from "./openai-errors.ts";
import { diceFor, fingerprint } from "./prompt-seed.ts";
import { asksForHeadingOnly, asksForMetaDescription, charactersAskedFor, DEFAULT_WORDS, keywordsFor, outlineHeadings, phrasesAskedFor, titleFor, topicFor, wordsAskedFor } from "./prompt-reading.ts";
import { headingWith, openingWith, writeArticle, writeDescriptionWithin, writeParagraphs } from "./writer.ts";
import { citing } from "./citing.ts";
import { languageAskedFor } from "./prose-banks.ts";
import { cutMidSentence, fillerHabitOf, fillerOf, isCutShort, withFiller, wordsWritten, writesLikeARealModel } from "./real-model-writing.ts";

export interface ChatState {
  calls: CallCounter;
  /** Conversations already failed once by `[[sim:fail-once]]`. */
  failedOnce: Set<string>;
}

export interface ChatOutcome {
  status: number;
  body: unknown;
}

interface Message {
  role: string;
  content: unknown;
}

export const SYSTEM_FINGERPRINT = "simulator";

function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .filter((part): part is { type: string; text: string } => part?.type === "text" && typeof part.text === "string")
      .map((part) => part.text)
      .join("\n");
  }
  return "";
}

// Tokens are approximated the way people estimate them by hand: about 1.3 per word.
export function tokensIn(text: string): number {
  return Math.round(countTokens(text) * 1.3);
}

function promptTokensOf(conversation: unknown[]): number {
  return tokensIn(conversation.map((m) => messageText((m as Message | null)?.content)).join("\n"));
}

/** A call's cost as token rate limits count it: its prompt plus the most it may answer. */
export function tokensRequested(body: Record<string, unknown> | null): number {
  const messages = body?.messages;
  const most = body?.max_completion_tokens ?? body?.max_tokens;
  return promptTokensOf(Array.isArray(messages) ? messages : []) + (typeof most === "number" && most > 0 ? most : 0);
}

function invalid(message: string, param: string | null = null): ChatOutcome {
  return { status: 400, body: openAIErrorBody(message, "invalid_request_error", null, param) };
}

export async function completeChat(request: unknown, state: ChatState): Promise<ChatOutcome> {
  if (!request || typeof request !== "object") return invalid("The request body must be a JSON object.");
  const body = request as Record<string, unknown>;
  if (typeof body.model !== "string" || body.model === "") return invalid("you must provide a model parameter", "model");
  if (body.stream === true) return invalid("Streaming is not supported by the model simulator.", "stream");
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every((m) => m && typeof m.role === "string")) {
    return invalid("'messages' must be a non-empty array of {role, content} objects.", "messages");
  }
  const conversation = messages as Message[];
  const lastUser = [...conversation].reverse().find((m) => m.role === "user");
  const userText = lastUser ? messageText(lastUser.content) : "";
  state.calls.record(userText);

  const directives = readDirectives(userText);
  if (directives.sleepMs > 0) await Bun.sleep(directives.sleepMs);
  if (body.model.startsWith("unavailable")) {
    return { status: 503, body: openAIErrorBody(`The model '${body.model}' is currently unavailable.`, "server_error", "model_unavailable") };
  }
  if (directives.fail) {
    return { status: 500, body: openAIErrorBody("The server had an error while processing your request (simulated failure).", "server_error", "simulated_failure") };
  }
  const conversationKey = JSON.stringify(conversation);
  if (directives.failOnce && !state.failedOnce.has(conversationKey)) {
    state.failedOnce.add(conversationKey);
    return { status: 500, body: openAIErrorBody("The server had an error while processing your request (simulated one-time failure).", "server_error", "simulated_failure") };
  }

  const format = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (format?.type === "json_schema" && (!format.json_schema || typeof format.json_schema.schema !== "object" || format.json_schema.schema === null)) {
    return invalid("response_format.json_schema.schema must be a JSON Schema object.", "response_format");
  }
  const seed = JSON.stringify([conversation, format ?? null]);
  let reply: Reply;
  try {
    reply = directives.echo
      ? { content: withoutDirectives(userText), finishReason: "stop" }
      : compose(conversation, userText, directives.words, format, seed, writesLikeARealModel(body.model));
  } catch {
    // Only a malformed schema (e.g. a property that is not an object) can break composing; OpenAI refuses those with 400.
    return invalid("response_format.json_schema.schema is not a valid JSON Schema.", "response_format");
  }

  const { content, finishReason } = reply;
  const promptTokens = promptTokensOf(conversation);
  const completionTokens = tokensIn(content);
  return {
    status: 200,
    body: {
      id: `chatcmpl-sim${fingerprint(seed)}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: finishReason }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    },
  };
}

interface Reply {
  content: string;
  /** "length" when the reply ran out of room mid-text, as a real model's does. */
  finishReason: "stop" | "length";
}

function compose(
  conversation: Message[],
  userText: string,
  wordsDirective: number | null,
  format: { type?: string; json_schema?: { schema?: unknown } } | undefined,
  seed: string,
  likeARealModel: boolean,
): Reply {
  const prompt = withoutDirectives(userText);
  const everything = conversation.map((m) => withoutDirectives(messageText(m.content))).join("\n");
  const words = wordsDirective ?? wordsAskedFor(prompt) ?? wordsAskedFor(everything) ?? DEFAULT_WORDS;
  const title = titleFor(prompt);
  const topic = topicFor(prompt, title);
  const subject = { title, topic, keywords: keywordsFor(prompt, topic), words, seed, language: languageAskedFor(prompt) ?? languageAskedFor(everything) };

  if (format?.type === "json_schema") return { content: JSON.stringify(jsonFromSchema(format.json_schema!.schema as JsonSchema, subject)), finishReason: "stop" };
  if (format?.type === "json_object") return { content: JSON.stringify(smallJsonObject(subject)), finishReason: "stop" };
  // Asked for a meta description, a model writes one, to the characters asked (the description's own rule otherwise).
  if (asksForMetaDescription(prompt)) return { content: writeDescriptionWithin(subject, diceFor(`description#${seed}`), charactersAskedFor(prompt) ?? { min: 0, max: 155 }), finishReason: "stop" };
  // A phrase the prompt asks for is used at once: in the heading asked for, else in the opening sentence.
  const phrases = phrasesAskedFor(prompt);
  if (asksForHeadingOnly(prompt)) return { content: `## ${headingWith(phrases[0] ?? topic, diceFor(`heading#${seed}`), subject.language)}`, finishReason: "stop" };
  const written = likeARealModel ? wordsWritten(words, seed) : words;
  // A padding habit's words take the place of drafted ones: the reply is as long as it would be.
  const habit = likeARealModel ? fillerHabitOf(written, seed) : null;
  const fillerDice = diceFor(`filler-text#${seed}`);
  const filler = habit ? fillerOf(habit, (n) => writeParagraphs(subject, n, fillerDice).join(" ")) : [];
  const drafted = writeArticle({ ...subject, words: written - countWords(filler.join("\n\n")), headings: outlineHeadings(prompt) });
  const opened = phrases.length > 0 ? openingWith(drafted, phrases, subject, diceFor(`phrases#${seed}`)) : drafted;
  const article = citing(prompt, habit ? withFiller(opened, habit, filler) : opened);
  if (!likeARealModel || !isCutShort(seed)) return { content: article, finishReason: "stop" };
  const cut = cutMidSentence(article, seed);
  return { content: cut, finishReason: cut === article ? "stop" : "length" };
}
