/** Reading the tables of the docs' Markdown back, for the tests that compare them with the code. */

/** The Markdown table whose header row starts with `firstHeader`: its body rows, cells trimmed (indented tables too). */
export const tableRows = (markdown: string, firstHeader: string): string[][] => {
  const lines = markdown.split('\n').map((line) => line.trim());
  const start = lines.findIndex((line) => new RegExp(`^\\|\\s*${firstHeader}\\s*\\|`).test(line));
  if (start === -1) throw new Error(`no table starting with "${firstHeader}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
};

/** The part of `markdown` under the heading `heading` (its whole line), up to the next heading of the same or a higher level. */
export const section = (markdown: string, heading: string): string => {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(heading)![0].length;
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && /^#+/.exec(line)![0].length <= level);
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
};

/** The fenced code blocks of `markdown`, in order: their language and text. */
export const codeBlocks = (markdown: string): { language: string; code: string }[] =>
  [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ language: match[1]!, code: match[2]! }));
