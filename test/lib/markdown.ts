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
