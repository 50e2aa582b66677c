// Error bodies in OpenAI's shape so the official SDK raises its typed errors (APIError.status etc.).

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAIErrorBody(message: string, type: string, code: string | null, param: string | null = null): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export function openAIError(status: number, message: string, type: string, code: string | null, param: string | null = null): Response {
  return jsonResponse(openAIErrorBody(message, type, code, param), status);
}

export const badRequest = (message: string, code: string | null = null, param: string | null = null): Response =>
  openAIError(400, message, "invalid_request_error", code, param);

export const notFound = (message: string): Response => openAIError(404, message, "invalid_request_error", "not_found");
