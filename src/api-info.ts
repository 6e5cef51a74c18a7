// The API's name, version and opening words, for the served OpenAPI document and the SDK's.

export const API_VERSION = '0.1.0';
export const API_TITLE = 'Purser treasury API';
export const API_DESCRIPTION =
  'Treasury infrastructure for autonomous agents. Errors use one body: ' +
  '`{code, message, remediation, docs_url, request_id, next?}`; see /docs/errors. Mutations take an ' +
  '`Idempotency-Key` header: a retry with the same key replays the first answer. The same operations ' +
  "are MCP tools at POST /v1/mcp (streamable HTTP, an API key as bearer), bounded by the key's scopes.";
