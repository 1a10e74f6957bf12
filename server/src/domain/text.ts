// Text the service takes in: any string of a request body must be well-formed Unicode
// without U+0000. Neither can be stored everywhere (PostgreSQL refuses both in JSON and
// NUL in text), nor means anything in a name, a prompt or a script; refusing them up
// front gives the same 422 on every store instead of a failure deep in one. The contract
// states the rule once, as the pattern of its PlainText schema (contract/text.ts), which
// the schemas name on free-text members only; this walk holds every string to it.
import { textPattern } from '../../../contract/text.ts';
import type { FieldError } from './errors.ts';

/** The rule's name and message in errors[], whether the schema's pattern or this walk found the string. */
export const TEXT_RULE = 'text';
export const TEXT_MESSAGE = 'must be well-formed Unicode text without U+0000';
// The `u` flag reads a lone surrogate as one code point, which the pattern refuses.
const STORABLE = new RegExp(textPattern(), 'u');

/**
 * The members of `body`, at any depth, whose strings break the rule (member names
 * included). Walked with a stack of its own, not by recursion: a body can nest deeper
 * than the call stack goes.
 */
export function textErrors(body: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const pending: [unknown, string][] = [[body, '']];
  while (pending.length > 0) {
    const [node, path] = pending.pop()!;
    if (typeof node === 'string') {
      if (!isStorableText(node)) errors.push({ field: path, rule: TEXT_RULE, message: TEXT_MESSAGE });
    } else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (isStorableText(key)) pending.push([value, path ? `${path}.${key}` : key]);
        else errors.push({ field: path, rule: TEXT_RULE, message: `has a member name that ${TEXT_MESSAGE}` });
      }
    }
  }
  return errors;
}

/** The most characters an account's name has: as many as an avatar's (the contract's AvatarName). */
export const NAME_MAX_CHARACTERS = 200;
// Beyond the text rule, a name is printable: it is shown on one line of the operator's
// listings and terminals, where a control character (an escape sequence) or a line break
// would forge or hide what is shown. U+FFFD is what a command line's invalid UTF-8 arrives
// as: the bytes meant are lost, so the name is refused rather than stored garbled.
const UNPRINTABLE = /[\p{Cc}\p{Zl}\p{Zp}\uFFFD]/u;

/** Why `name` cannot name an account, or null when it can: the text rule, printable, 1 to NAME_MAX_CHARACTERS characters. */
export function nameProblem(name: string): string | null {
  if (!isStorableText(name)) return TEXT_MESSAGE;
  if (UNPRINTABLE.test(name)) return 'must be printable: no control characters, line breaks or invalid UTF-8';
  const characters = [...name].length;
  if (characters < 1 || characters > NAME_MAX_CHARACTERS) return `must be 1 to ${NAME_MAX_CHARACTERS} characters`;
  return null;
}

function isStorableText(s: string): boolean {
  return STORABLE.test(s);
}
