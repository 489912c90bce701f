/**
 * Code blocks of the Markdown docs, and how a page says they combine. A `ts` or `sh` block may be
 * preceded (on the line right above its fence) by a directive comment:
 *
 *   <!-- snippet: skip why it cannot run -->   not run; the reason is required
 *   <!-- snippet: file=kernels.ts -->          a module file other blocks import or load; not run itself
 *   <!-- snippet: setup -->                    runs at the top level of its program, so later blocks see its names
 *   <!-- snippet: program=gpu -->              belongs to another program of the page (default: main); programs named gpu, or naming the webgpu backend, run where the GPU tests do
 *   <!-- snippet: copy=examples/k.mjs:../k.mjs --> copies a repository file where the program expects it
 *   <!-- snippet: setup program=gpu            words combine; lines after the first are hidden code
 *   const X = randomPcfs({ n: 20, points: 5 });  run before the block (a reader's "given ...")
 *   -->
 *
 * A comment right below a block's closing fence holds hidden code run after the block, in its
 * scope: the checks that what the block's comments promise (a value, a message) is what it gives.
 *
 *   <!-- snippet: then
 *   strictEqual(y[0], 7);
 *   -->
 *
 * Without a directive a block runs in its own scope `{ ... }` in program `main`, after the blocks
 * before it. Blocks in other languages (diagrams, output, signatures in plain fences) are text.
 */

/** One fenced code block of a page. */
export interface Snippet {
  readonly page: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  readonly skip?: string;
  readonly file?: string;
  readonly setup: boolean;
  readonly program: string;
  readonly hidden: string;
  /** Hidden code run after the block (the `then` comment below it). */
  readonly then: string;
  /** `copy=<repository file>:<destination>` words: files the program needs that the page shows elsewhere. */
  readonly copy: readonly string[];
}

const DIRECTIVE = /^<!-- snippet:(.*)$/;

/** The `ts`/`sh` code blocks of a Markdown page with their directives. */
export function snippetsOf(page: string, markdown: string): Snippet[] {
  const lines = markdown.split('\n');
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)\s*$/.exec(lines[i]!);
    if (fence === null) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith('```')) end++;
    const lang = fence[1]!;
    const code = lines.slice(i + 1, end).join('\n');
    const directive = directiveAbove(lines, i);
    const opening = i;
    const then = thenBelow(lines, end);
    i = end;
    if (lang !== 'ts' && lang !== 'sh') continue;
    const words = directive.words;
    const skipAt = words.indexOf('skip');
    const skip = skipAt >= 0 ? words.slice(skipAt + 1).join(' ') : undefined;
    if (skip === '') throw new Error(`${page}:${opening + 1}: 'snippet: skip' needs a reason`);
    const unknown = (skipAt < 0 ? words : words.slice(0, skipAt)).filter((w) => w !== 'setup' && !/^(file|program|copy)=./.test(w));
    if (unknown.length > 0) throw new Error(`${page}:${opening + 1}: unknown snippet directive '${unknown[0]}' (skip, setup, file=, program=, copy=)`);
    if (then !== '' && (skipAt >= 0 || words.some((w) => w.startsWith('file=')))) throw new Error(`${page}:${opening + 1}: a 'then' check below a block that does not run (skip or file=) would never run`);
    const value = (key: string) => words.find((w) => w.startsWith(`${key}=`))?.slice(key.length + 1);
    out.push({
      page,
      line: opening + 1,
      lang,
      code,
      setup: skipAt < 0 && words.includes('setup'),
      program: value('program') ?? 'main',
      hidden: directive.hidden,
      then,
      copy: words.filter((w) => w.startsWith('copy=')).map((w) => w.slice(5)),
      ...(skip !== undefined ? { skip } : {}),
      ...(skipAt < 0 && value('file') !== undefined ? { file: value('file')! } : {}),
    });
  }
  return out;
}

/** The directive comment ending on the line above `fence`, if any. */
function directiveAbove(lines: string[], fence: number): { words: string[]; hidden: string } {
  if (fence === 0 || !lines[fence - 1]!.trimEnd().endsWith('-->')) return { words: [], hidden: '' };
  let start = fence - 1;
  while (start >= 0 && !DIRECTIVE.test(lines[start]!)) {
    if (lines[start]!.startsWith('<!--') || start < fence - 40) return { words: [], hidden: '' };
    start--;
  }
  if (start < 0) return { words: [], hidden: '' };
  const first = DIRECTIVE.exec(lines[start]!)![1]!.replace(/-->\s*$/, '').trim();
  // A `then` comment belongs to the block above it, even when another block follows at once.
  if (first.split(/\s+/)[0] === 'then') return { words: [], hidden: '' };
  const hidden = lines.slice(start + 1, fence - 1).join('\n') + (start === fence - 1 ? '' : '\n' + lines[fence - 1]!.replace(/-->\s*$/, ''));
  return { words: first.split(/\s+/).filter((w) => w !== ''), hidden: start === fence - 1 ? '' : hidden.trim() };
}

/** The code of the `then` comment that starts right below the closing fence at `end`, or ''. */
function thenBelow(lines: string[], end: number): string {
  if (!/^<!-- snippet: then\s*$/.test(lines[end + 1] ?? '')) return '';
  let close = end + 2;
  while (close < lines.length && !lines[close]!.trimEnd().endsWith('-->')) close++;
  const last = (lines[close] ?? '').replace(/-->\s*$/, '');
  return [...lines.slice(end + 2, close), last].join('\n').trim();
}

const IMPORT = /^import\s+(type\s+)?\{([^}]*)\}\s+from\s+(['"])([^'"]+)\3;?\s*$/;

/**
 * One program from its blocks: imports hoisted and merged per module, setup blocks at the top
 * level, every other block in its own scope, each announced on stdout so a failure can be placed.
 */
export function programOf(blocks: readonly Snippet[]): string {
  const imports = new Map<string, Set<string>>();
  const body: string[] = [];
  for (const b of blocks) {
    const kept: string[] = [];
    for (const line of `${b.hidden}\n${b.code}\n${b.then}`.split('\n')) {
      const m = IMPORT.exec(line);
      if (m === null) {
        kept.push(line);
        continue;
      }
      const names = imports.get(m[4]!) ?? new Set<string>();
      for (const n of m[2]!.split(',').map((s) => s.trim()).filter((s) => s !== '')) names.add(m[1] !== undefined ? `type ${n.replace(/^type\s+/, '')}` : n);
      imports.set(m[4]!, names);
    }
    const where = `${b.page}:${b.line}`;
    body.push(`console.log(${JSON.stringify(`#snippet ${where}`)});`);
    body.push(b.setup ? kept.join('\n') : `{\n${kept.join('\n')}\n}`);
  }
  const head = [...imports].map(([from, names]) => {
    // A name imported both as a type and as a value is imported once, as a value.
    const values = new Set([...names].filter((n) => !n.startsWith('type ')));
    const all = [...names].filter((n) => !n.startsWith('type ') || !values.has(n.slice(5)));
    return `import { ${[...new Set(all)].join(', ')} } from '${from}';`;
  });
  // Programs end here even when a block leaves a Context open: the docs test what the blocks do.
  return `${head.join('\n')}\n${body.join('\n')}\nprocess.exit(0);\n`;
}
