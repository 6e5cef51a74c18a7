// A small streaming XML scanner: fed text in chunks of any size, it reports start tags, end tags
// and text in document order, holding back only an unfinished tag or text run between chunks.
// It checks that tags nest and that one root element holds everything, decodes the predefined
// entities and character references, and refuses DOCTYPE and other declarations, so a downloaded
// file can never expand entities (no billion laughs, no external entities). Attributes are
// skipped and namespace prefixes dropped: the SDN list keeps its data in elements.

export interface XmlEvents {
  /** A start tag (also reported for `<x/>`, followed at once by `close`). Local name, no prefix. */
  open(name: string): void;
  close(name: string): void;
  /** Character data of the current element, entities decoded; one element's text may come in parts. */
  text(text: string): void;
}

export class XmlSyntaxError extends Error {
  constructor(message: string, offset: number) {
    super(`${message} (at character ${offset})`);
    this.name = 'XmlSyntaxError';
  }
}

const NAME = /^[A-Za-z_][\w.:-]*$/;
const ENTITY = /&(?:#x([0-9a-fA-F]{1,6})|#([0-9]{1,7})|(lt|gt|amp|quot|apos));/g;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const INCOMPLETE = -1;
const MALFORMED = -2;

export class XmlScanner {
  private buffer = '';
  /** Characters consumed before the start of `buffer`, for error positions. */
  private offset = 0;
  private readonly stack: string[] = [];
  private rootClosed = false;
  private ended = false;

  constructor(private readonly events: XmlEvents) {}

  write(chunk: string): void {
    if (this.ended) throw new Error('XmlScanner: write after end');
    this.buffer += chunk;
    this.drain();
  }

  /** Declares the document complete; throws if it stopped inside an element or never had one. */
  end(): void {
    this.drain();
    this.ended = true;
    if (this.buffer.startsWith('<')) throw this.error('the document ends inside a tag', 0);
    if (this.stack.length > 0) {
      throw this.error(
        `the document ends before </${this.stack.at(-1) ?? ''}> (truncated?)`,
        this.buffer.length,
      );
    }
    if (!this.rootClosed) throw this.error('the document has no root element', 0);
    if (this.buffer.trim() !== '') throw this.error('text after the root element', 0);
  }

  private drain(): void {
    const buf = this.buffer;
    let pos = 0;
    while (pos < buf.length) {
      const lt = buf.indexOf('<', pos);
      // Text without a following tag may continue in the next chunk: keep it.
      if (lt === -1) break;
      if (lt > pos) this.emitText(buf.slice(pos, lt), pos);
      pos = lt;
      const next = this.markup(buf, pos);
      if (next === INCOMPLETE) break;
      pos = next;
    }
    this.offset += pos;
    this.buffer = buf.slice(pos);
  }

  /** Handles the markup starting at `buf[pos] === '<'`; returns the position after it, or INCOMPLETE. */
  private markup(buf: string, pos: number): number {
    if (buf.length < pos + 2) return INCOMPLETE;
    const second = buf[pos + 1];
    if (second === '?') {
      // XML declaration or processing instruction: nothing in it matters here.
      const end = buf.indexOf('?>', pos + 2);
      return end === -1 ? INCOMPLETE : end + 2;
    }
    if (second === '!') return this.declaration(buf, pos);
    if (second === '/') {
      const end = buf.indexOf('>', pos + 2);
      if (end === -1) return INCOMPLETE;
      const name = buf.slice(pos + 2, end).trim();
      const open = this.stack.pop();
      if (open === undefined || open !== name) {
        throw this.error(open === undefined ? `unexpected </${name}>` : `</${name}> closes <${open}>`, pos);
      }
      if (this.stack.length === 0) this.rootClosed = true;
      this.events.close(localName(name));
      return end + 1;
    }
    const end = tagEnd(buf, pos + 1);
    if (end === INCOMPLETE) return INCOMPLETE;
    if (end === MALFORMED) throw this.error('"<" inside a tag', pos);
    let inner = buf.slice(pos + 1, end);
    const selfClosing = inner.endsWith('/');
    if (selfClosing) inner = inner.slice(0, -1);
    const name = /^[^\s]*/.exec(inner)?.[0] ?? '';
    if (!NAME.test(name)) throw this.error(`invalid tag name "${name}"`, pos);
    if (this.stack.length === 0 && this.rootClosed) throw this.error(`<${name}> after the root element`, pos);
    this.events.open(localName(name));
    if (selfClosing) {
      if (this.stack.length === 0) this.rootClosed = true;
      this.events.close(localName(name));
    } else {
      this.stack.push(name);
    }
    return end + 1;
  }

  private declaration(buf: string, pos: number): number {
    if (buf.startsWith('<!--', pos)) {
      const end = buf.indexOf('-->', pos + 4);
      return end === -1 ? INCOMPLETE : end + 3;
    }
    if (buf.startsWith('<![CDATA[', pos)) {
      const end = buf.indexOf(']]>', pos + 9);
      if (end === -1) return INCOMPLETE;
      if (this.stack.length === 0) throw this.error('CDATA outside the root element', pos);
      this.events.text(buf.slice(pos + 9, end));
      return end + 3;
    }
    const head = buf.slice(pos, pos + 9);
    if (head.length < 9 && ('<!--'.startsWith(head) || '<![CDATA['.startsWith(head))) return INCOMPLETE;
    throw this.error('markup declarations (<!DOCTYPE, <!ENTITY …) are refused', pos);
  }

  private emitText(raw: string, pos: number): void {
    if (this.stack.length === 0) {
      if (raw.trim() !== '') throw this.error('text outside the root element', pos);
      return;
    }
    this.events.text(this.decode(raw, pos));
  }

  private decode(raw: string, pos: number): string {
    if (!raw.includes('&')) return raw;
    let decoded = 0;
    const text = raw.replace(
      ENTITY,
      (_match, hex: string | undefined, dec: string | undefined, named: string | undefined) => {
        decoded++;
        if (named !== undefined) return NAMED[named] ?? '';
        const code = hex !== undefined ? parseInt(hex, 16) : Number(dec);
        if (code > 0x10ffff || code === 0) throw this.error(`invalid character reference ${_match}`, pos);
        return String.fromCodePoint(code);
      },
    );
    if (decoded !== raw.split('&').length - 1) throw this.error('unknown entity or a bare "&" in text', pos);
    return text;
  }

  private error(message: string, pos: number): XmlSyntaxError {
    return new XmlSyntaxError(message, this.offset + pos);
  }
}

/** The index of the `>` ending the start tag whose name begins at `from`, skipping quoted attribute values. */
function tagEnd(buf: string, from: number): number {
  let quote: string | null = null;
  for (let i = from; i < buf.length; i++) {
    const c = buf[i];
    if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return i;
    } else if (c === '<') {
      return MALFORMED;
    }
  }
  return INCOMPLETE;
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}
