import { ERROR_CODES, type ErrorCodeInfo } from '../../core/errors/codes.ts';

const escape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The default `next` of a code, or why it has none. */
function nextCell(info: ErrorCodeInfo): string {
  if (!('next' in info)) return escape(info.noDefaultNext);
  return info.next
    .map((step) => {
      const why = step.why.replaceAll('{payments_chain}', 'the payments chain');
      const where = step.onlyIn ? ` (${step.onlyIn} only)` : '';
      return `<code>${step.method} ${escape(step.path)}</code>: ${escape(why)}${where}`;
    })
    .join('<br>');
}

/** The served error table: one anchor per code, which every error's docs_url points at. */
export function renderErrorPage(): string {
  const rows = Object.entries(ERROR_CODES)
    .map(
      ([code, info]: [string, ErrorCodeInfo]) => `<tr id="${code}">
  <td><a href="#${code}"><code>${code}</code></a></td><td>${info.status}</td>
  <td>${escape(info.description)}</td><td>${escape(info.remediation)}</td><td>${nextCell(info)}</td>
</tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Purser error codes</title>
<style>body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.4rem .6rem;vertical-align:top;text-align:left}
tr:target{background:#fff6d5}</style></head>
<body><h1>Error codes</h1>
<p>Every error response has the body <code>{code, message, remediation, docs_url, request_id, next?}</code>.
<code>request_id</code> is also in the <code>x-request-id</code> header; quote it in support requests.
<code>next</code> lists calls that move you forward: the raiser's when it knows more (the delegation in a conflict),
otherwise the default below. The 402 of <code>POST /v1/feedback</code> also carries the x402 v1 fields
<code>x402Version</code>, <code>error</code> and <code>accepts</code>, and the x402 v2 <code>PAYMENT-REQUIRED</code> header.
The API reference is at <a href="/docs">/docs</a> and the OpenAPI document at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
<table><thead><tr><th>Code</th><th>Status</th><th>Meaning</th><th>What to do</th><th>Next step</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>
`;
}
