/**
 * WGSL without its prose, for the browser bundle: in the template literals of src/ that are marked
 * `/* wgsl *\/`, a line that holds only a `//` comment is emptied and the indentation of every
 * line is dropped. The comments explain the shaders to readers of the source, while every page
 * would download them (700 bytes gzipped of the bundle's 100 kB, most of them src/pcf/wgslLpRange.ts).
 *
 * Why this cannot change a shader: WGSL has no string literals, so `//` only ever begins a comment,
 * and whitespace only separates tokens, which the newline kept at each line's end still does. Lines
 * are emptied rather than removed so that the bundle's source map keeps its line numbers. A line
 * that also holds a `${...}` substitution is left alone, as is the code inside substitutions. Node
 * runs the source as it is.
 */
import { readFile } from 'node:fs/promises';

const MARK = '/* wgsl */';

/**
 * The source text with its `/* wgsl *\/` template literals stripped as described above.
 * @throws Error for a marked template literal that never ends.
 */
export function stripWgslComments(source) {
  let out = '';
  let from = 0;
  for (let mark = source.indexOf(MARK); mark >= 0; mark = source.indexOf(MARK, from)) {
    const tick = source.slice(mark + MARK.length).search(/\S/) + mark + MARK.length;
    if (source[tick] !== '`') {
      out += source.slice(from, tick);
      from = tick;
      continue;
    }
    const end = templateEnd(source, tick);
    out += source.slice(from, tick) + stripTemplate(source.slice(tick, end));
    from = end;
  }
  return out + source.slice(from);
}

/** Index just past the template literal that opens at `start` (a backtick), substitutions included. */
function templateEnd(s, start) {
  for (let i = start + 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '`') return i + 1;
    else if (s[i] === '$' && s[i + 1] === '{') i = substitutionEnd(s, i + 2) - 1;
  }
  throw new Error(`a ${MARK} template literal at offset ${start} never ends`);
}

/** Index just past the `}` that closes a substitution whose code starts at `start`. */
function substitutionEnd(s, start) {
  let depth = 0;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (c === '`') i = templateEnd(s, i) - 1;
    else if (c === "'" || c === '"') {
      for (i++; i < s.length && s[i] !== c; i++) if (s[i] === '\\') i++;
    } else if (c === '{') depth++;
    else if (c === '}' && depth-- === 0) return i + 1;
  }
  throw new Error(`a substitution at offset ${start} never ends`);
}

/** The template literal `t` (backticks included) with comment lines emptied and indentation dropped. */
function stripTemplate(t) {
  // Cut into text and substitutions: odd pieces are `${...}`, which stay as they are.
  const pieces = [];
  let from = 0;
  for (let i = 1; i < t.length - 1; i++) {
    if (t[i] === '\\') i++;
    else if (t[i] === '$' && t[i + 1] === '{') {
      const end = substitutionEnd(t, i + 2);
      pieces.push(t.slice(from, i), t.slice(i, end));
      from = end;
      i = end - 1;
    }
  }
  pieces.push(t.slice(from));
  return pieces.map((piece, k) => (k % 2 === 1 ? piece : stripText(piece, k > 0))).join('');
}

/**
 * One text piece of a template: every line but a first that continues a substitution loses its
 * indentation; a comment line is emptied when the line is all in this piece (not its first line,
 * which holds the opening backtick or follows a substitution, nor its last, which holds the
 * closing backtick or precedes one).
 */
function stripText(text, afterSubstitution) {
  const lines = text.split('\n');
  return lines
    .map((line, k) => {
      if (k === 0 && afterSubstitution) return line;
      const bare = line.replace(/^[ \t]+/, '');
      return k > 0 && k < lines.length - 1 && bare.startsWith('//') ? '' : bare;
    })
    .join('\n');
}

/** The esbuild plugin: loads the src/ files that hold a marked template literal through stripWgslComments. */
export const wgslComments = {
  name: 'wgsl-comments',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes(MARK)) return undefined;
      return { contents: stripWgslComments(source), loader: 'ts' };
    });
  },
};
