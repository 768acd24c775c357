/** Just enough Markdown reading for the docs tests: fenced code blocks, and the links outside them. */

export interface CodeBlock {
  /** The info string after the opening fence, e.g. `ts` or `ts fragment`. */
  info: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
}

export interface MarkdownLink {
  target: string;
  line: number;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})(.*)$/;

/** The fenced code blocks of a Markdown text, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let open: { fence: string; info: string; line: number; body: string[] } | undefined;
  lines.forEach((text, index) => {
    const fence = FENCE.exec(text);
    if (open) {
      if (fence && fence[1].startsWith(open.fence) && fence[2].trim() === '') {
        blocks.push({ info: open.info, code: open.body.join('\n'), line: open.line });
        open = undefined;
      } else {
        open.body.push(text);
      }
    } else if (fence) {
      open = { fence: fence[1], info: fence[2].trim(), line: index + 1, body: [] };
    }
  });
  return blocks;
}

/** Each line outside fenced code blocks, with its 1-based number. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const prose: { text: string; line: number }[] = [];
  let inFence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const fence = FENCE.exec(text);
    if (inFence) {
      if (fence && fence[1].startsWith(inFence) && fence[2].trim() === '') inFence = undefined;
    } else if (fence) {
      inFence = fence[1]!;
    } else {
      prose.push({ text, line: index + 1 });
    }
  });
  return prose;
}

/** Links and images (`[t](x)`, `![t](x)`, `[t]: x`, `<img src="x">`) outside code blocks and inline code. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const prose = text.replace(/(`+)[^`]*?\1/g, '');
    for (const match of prose.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ target: match[1], line });
    for (const match of prose.matchAll(/<img\s[^>]*src="([^"]+)"/g)) links.push({ target: match[1], line });
    const reference = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
    if (reference) links.push({ target: reference[1], line });
  }
  return links;
}

/** The ATX headings (`#` to `######`) outside code blocks, with their level. */
export function markdownHeadings(markdown: string): { level: number; text: string; line: number }[] {
  const headings: { level: number; text: string; line: number }[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(text);
    if (heading) headings.push({ level: heading[1].length, text: heading[2], line });
  }
  return headings;
}
