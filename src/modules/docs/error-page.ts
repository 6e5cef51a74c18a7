import { ERROR_CODES } from '../../core/errors/codes.ts';

const escape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The served error table: one anchor per code, which every error's docs_url points at. */
export function renderErrorPage(): string {
  const rows = Object.entries(ERROR_CODES)
    .map(
      ([code, info]) => `<tr id="${code}">
  <td><a href="#${code}"><code>${code}</code></a></td><td>${info.status}</td>
  <td>${escape(info.description)}</td><td>${escape(info.remediation)}</td>
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
The API reference is at <a href="/docs">/docs</a> and the OpenAPI document at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
<table><thead><tr><th>Code</th><th>Status</th><th>Meaning</th><th>What to do</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>
`;
}
