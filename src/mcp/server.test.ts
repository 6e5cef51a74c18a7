// A tool's result as an MCP client reads it: the API's body, and the HTTP status beside it in a
// field the body's own `status` (an intent's, an order's) cannot hide.

import { describe, expect, it } from 'vitest';
import { toolResult } from './server.ts';

describe('a tool result', () => {
  it('keeps an intent’s own status and the HTTP status side by side', () => {
    const result = toolResult({ status: 200, body: '{"id":"int_1","status":"filled"}' });
    expect(result.structuredContent).toEqual({ id: 'int_1', status: 'filled', http_status: 200 });
    expect(result.isError).toBeUndefined();
  });

  it('names the HTTP status even when a body tries to set it, and marks an error answer', () => {
    const result = toolResult({ status: 404, body: '{"code":"NOT_FOUND","http_status":200}' });
    expect(result.structuredContent).toMatchObject({ code: 'NOT_FOUND', http_status: 404 });
    expect(result.isError).toBe(true);
  });

  it('gives a body that is not an object as text only', () => {
    const result = toolResult({ status: 200, body: '[1,2]' });
    expect(result.structuredContent).toBeUndefined();
    expect(result.content).toEqual([{ type: 'text', text: '[1,2]' }]);
  });
});
