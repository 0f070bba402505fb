/**
 * A small Markdown subset for model text, rendered as Preact nodes (never HTML: a tag in the text stays
 * text): fenced code blocks, headings, lists, paragraphs; inline code, bold, italic and links (only
 * http, https and mailto addresses become links, opened without the opener).
 */
import type { ComponentChildren } from 'preact';

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\n]+\*|_[^_\n]+_)|(\[[^\]\n]+\]\([^)\s]+\))/;

function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let rest = text;
  for (let match = INLINE.exec(rest); match; match = INLINE.exec(rest)) {
    if (match.index > 0) out.push(rest.slice(0, match.index));
    const token = match[0];
    if (match[1]) out.push(<code>{token.slice(1, -1)}</code>);
    else if (match[2]) out.push(<strong>{inline(token.slice(2, -2))}</strong>);
    else if (match[3]) out.push(<em>{inline(token.slice(1, -1))}</em>);
    else {
      const [, label = '', href = ''] = /^\[([^\]]+)\]\(([^)]+)\)$/.exec(token) ?? [];
      out.push(
        /^(https?:|mailto:)/i.test(href) ? (
          <a href={href} target="_blank" rel="noopener noreferrer">
            {label}
          </a>
        ) : (
          token
        ),
      );
    }
    rest = rest.slice(match.index + token.length);
  }
  if (rest) out.push(rest);
  return out;
}

export function Markdown({ text }: { text: string }) {
  const blocks: ComponentChildren[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]!;
    const fence = /^```(\S*)/.exec(line);
    if (fence) {
      const body: string[] = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]!); i++) body.push(lines[i]!);
      i++;
      blocks.push(
        <pre tabIndex={0} data-lang={fence[1] || undefined}>
          <code>{body.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    const heading = /^(#{1,4})\s+(.*)$/.exec(line);
    if (heading) {
      blocks.push(
        <p>
          <strong>{inline(heading[2]!)}</strong>
        </p>,
      );
      i++;
      continue;
    }
    if (/^\s*([-*]|\d+\.)\s+/.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items: string[] = [];
      for (; i < lines.length && /^\s*([-*]|\d+\.)\s+/.test(lines[i]!); i++)
        items.push(lines[i]!.replace(/^\s*([-*]|\d+\.)\s+/, ''));
      const children = items.map((item) => <li>{inline(item)}</li>);
      blocks.push(ordered ? <ol>{children}</ol> : <ul>{children}</ul>);
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const para: string[] = [lines[i++]!];
    for (; i < lines.length && lines[i]!.trim() && !/^(```|#{1,4}\s|\s*([-*]|\d+\.)\s)/.test(lines[i]!); i++)
      para.push(lines[i]!);
    blocks.push(<p>{para.flatMap((part, n) => (n ? [<br />, ...inline(part)] : inline(part)))}</p>);
  }
  return <>{blocks}</>;
}
