// JSON syntax errors in words a person acts on. The engine reports JSON syntax errors with
// serde_json's text and place ("EOF while parsing a value"; a missing comma flagged where the next
// item starts). For display only, the editor re-reads the text with jsonc-parser (npm) and says
// what to fix, where to fix it: the comma to remove, the comma to add after the previous value.
// The engine's own text stays in `detail`.

import { parse } from 'jsonc-parser';

const E = {
  InvalidSymbol: 1,
  InvalidNumberFormat: 2,
  PropertyNameExpected: 3,
  ValueExpected: 4,
  ColonExpected: 5,
  CommaExpected: 6,
  CloseBraceExpected: 7,
  CloseBracketExpected: 8,
  EndOfFileExpected: 9,
  InvalidCommentToken: 10,
  UnexpectedEndOfComment: 11,
  UnexpectedEndOfString: 12,
  UnexpectedEndOfNumber: 13,
  InvalidUnicode: 14,
  InvalidEscapeCharacter: 15,
  InvalidCharacter: 16,
};

/** 1-based line and column (in characters, as the engine counts) of a UTF-16 offset. */
export function lineColumn(text, offset) {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return { line, column: Array.from(text.slice(lineStart, offset)).length + 1 };
}

/** Offset of the last non-space character before `offset`, or -1. */
function previousToken(text, offset) {
  let i = offset - 1;
  while (i >= 0 && /\s/.test(text[i])) i -= 1;
  return i;
}

function snippet(text, offset) {
  const m = /^("(?:[^"\\\n]|\\.){0,30}"?|[^\s,:{}[\]]{1,30}|.)/.exec(text.slice(offset));
  return m ? m[0] : '';
}

/** The first syntax problem as { offset, message }, or null when jsonc-parser finds none. */
function explain(text) {
  if (!text.trim()) {
    return { offset: 0, message: 'The config is empty. A config is a JSON object that starts with {"version": 1}; Reset loads the example.' };
  }
  const errors = [];
  try {
    parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  } catch {
    return null; // nesting deeper than the JS stack: keep the engine's message
  }
  if (!errors.length) return null;
  const { error, offset } = errors[0];
  const at = text[offset];
  const before = previousToken(text, offset);
  if ((error === E.PropertyNameExpected || error === E.ValueExpected) && (at === '}' || at === ']') && text[before] === ',') {
    return { offset: before, message: `Remove this comma: JSON allows no comma after the last item of ${at === '}' ? 'an object' : 'a list'}.` };
  }
  switch (error) {
    case E.CommaExpected:
    case E.CloseBraceExpected:
    case E.CloseBracketExpected:
      if (offset < text.length && at !== undefined && before >= 0 && !'{[,:'.includes(text[before])) {
        const next = snippet(text, offset);
        const { line } = lineColumn(text, offset);
        return { offset: before + 1, message: `A comma is missing after this value: add "," here (before ${next} on line ${line}).` };
      }
      if (offset >= text.length) {
        return { offset: Math.max(0, before + 1), message: `The text ends too early: a closing ${error === E.CloseBracketExpected ? ']' : '}'} is missing at the end.` };
      }
      return { offset, message: `Unexpected ${snippet(text, offset)} here; a "," or a closing bracket was expected.` };
    case E.PropertyNameExpected:
      if (at === "'") return { offset, message: 'Field names need double quotes ("name"), not single quotes.' };
      if (/[A-Za-z_]/.test(at ?? '')) return { offset, message: `Put the field name in double quotes: "${snippet(text, offset)}".` };
      if (offset >= text.length) return { offset: Math.max(0, before + 1), message: 'The text ends inside an object: a closing } is missing at the end.' };
      return { offset, message: 'A field name in double quotes was expected here, such as "rules".' };
    case E.ValueExpected:
      if (offset >= text.length) return { offset: Math.max(0, before + 1), message: 'The text ends where a value was expected: finish the value and close its brackets.' };
      if (at === "'") return { offset, message: 'Text values need double quotes ("text"), not single quotes.' };
      return { offset, message: `A value was expected here: a number, "text" in double quotes, true, false, a [list] or an {object}; found ${snippet(text, offset)}.` };
    case E.ColonExpected:
      return { offset, message: 'Add ":" between the field name and its value.' };
    case E.InvalidSymbol:
      if (at === "'") return { offset, message: 'JSON text uses double quotes ("text"), not single quotes.' };
      if (/[A-Za-z]/.test(at ?? '')) return { offset, message: `${snippet(text, offset)} is not a JSON value: put text in double quotes, or write true, false or null.` };
      return { offset, message: `${snippet(text, offset)} does not belong here in JSON.` };
    case E.UnexpectedEndOfString:
      return { offset, message: 'This text is never closed: add the closing double quote (") before the end of the line.' };
    case E.InvalidNumberFormat:
    case E.UnexpectedEndOfNumber:
      return { offset, message: 'This number is not valid JSON: write digits only, such as 8000 (no leading zeros, no trailing dot).' };
    case E.InvalidEscapeCharacter:
    case E.InvalidUnicode:
      return { offset, message: 'This backslash escape is not valid JSON: write \\\\ for a backslash, \\" for a quote, \\n for a new line.' };
    case E.InvalidCharacter:
      return { offset, message: 'Text values cannot hold a raw line break or tab: write \\n or \\t instead.' };
    case E.EndOfFileExpected:
      return { offset, message: 'The config ended before this: there is text after the closing } of the config. Remove it, or put it inside.' };
    case E.InvalidCommentToken:
    case E.UnexpectedEndOfComment:
      return { offset, message: 'JSON has no comments: remove this comment.' };
    default:
      return null;
  }
}

/**
 * The diagnostic to show for the engine's `json_syntax` diagnostic `d` of `text`: the same
 * diagnostic with a message a person acts on and the place to act, and the engine's text in
 * `detail`. Other diagnostics come back as they are.
 */
export function plainSyntaxDiagnostic(text, d) {
  if (d.code !== 'json_syntax') return d;
  const found = explain(text);
  if (!found) return d;
  return { ...d, ...lineColumn(text, found.offset), message: found.message, detail: d.message };
}
