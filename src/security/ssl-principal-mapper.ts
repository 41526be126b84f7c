/**
 * ssl.principal.mapping.rules: how a client certificate's distinguished
 * name (RFC 2253 form, `CN=alice,OU=eng,O=Acme`) becomes the principal's
 * name, as Kafka's SslPrincipalMapper does it.
 *
 * The rules are a comma-separated list of `DEFAULT` (the DN itself) and
 * `RULE:pattern/replacement/[LU]` entries (a rule applies when its pattern
 * matches the whole DN; L and U lower- or upper-case the result). The first
 * rule that applies wins; when none does, authentication fails.
 */

const RULE_PATTERN = String.raw`(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`;

export class NoMatchingRule extends Error {
  override readonly name = 'NoMatchingRule';
}

interface Rule {
  /** null for DEFAULT. */
  pattern: string | null;
  replacement: string;
  letterCase: 'L' | 'U' | '';
}

export class SslPrincipalMapper {
  private readonly rules: Rule[];

  /** Throws an Error naming the rule for a rule Kafka would refuse (a ConfigException there). */
  constructor(readonly source: string) {
    this.rules = splitRules(source).flatMap(parseRule);
  }

  /** The principal name for a DN; throws NoMatchingRule when no rule applies. */
  nameOf(distinguishedName: string): string {
    for (const rule of this.rules) {
      const name = applyRule(rule, distinguishedName);
      if (name !== null) return name;
    }
    throw new NoMatchingRule(`No rules apply to ${distinguishedName}, rules ${this.source}`);
  }
}

function splitRules(source: string): string[] {
  const splitter = new RegExp(String.raw`\s*(${RULE_PATTERN})\s*(,\s*|$)`, 'g');
  const rules: string[] = [];
  const text = source.trim();
  for (const match of text.matchAll(splitter)) {
    rules.push(match[1]!);
    // An empty match at the end of the text would repeat for ever in a hand-written loop; matchAll steps past it.
    if (match.index === text.length) break;
  }
  return rules;
}

function parseRule(text: string): Rule[] {
  const match = new RegExp(`^(?:${RULE_PATTERN})`).exec(text);
  if (match === null) throw new Error(`Invalid rule: ${text}`);
  if (match[0].length !== text.length) throw new Error(`Invalid rule: \`${text}\`, unmatched substring: \`${text.slice(match[0].length)}\``);
  if (match[1] !== undefined) return [{ pattern: null, replacement: '', letterCase: '' }];
  if (match[2] === undefined) return []; // an empty entry is ignored
  return [{ pattern: match[2], replacement: match[4] ?? '', letterCase: (match[6] ?? '') as Rule['letterCase'] }];
}

function applyRule(rule: Rule, distinguishedName: string): string | null {
  if (rule.pattern === null) return distinguishedName;
  if (!new RegExp(`^(?:${rule.pattern})$`).test(distinguishedName)) return null;
  // Java's replaceAll: every match is replaced, including an empty one at the end.
  const result = distinguishedName.replace(new RegExp(rule.pattern, 'g'), (...args: unknown[]) => {
    const groups = args.slice(0, args.findIndex((arg) => typeof arg === 'number')) as (string | undefined)[];
    return expandReplacement(rule.replacement, groups);
  });
  if (rule.letterCase === 'L') return result.toLowerCase();
  if (rule.letterCase === 'U') return result.toUpperCase();
  return result;
}

/**
 * A Java replacement string: `$n` is group n, `$0` the whole match (a
 * reference past the last group drops trailing digits until it names one,
 * as Kafka's escapeLiteralBackReferences rewrites it), `\c` is c.
 * `groups[0]` is the whole match.
 */
function expandReplacement(replacement: string, groups: readonly (string | undefined)[]): string {
  const groupCount = groups.length - 1;
  let out = '';
  for (let i = 0; i < replacement.length; i++) {
    const char = replacement[i]!;
    if (char === '\\' && i + 1 < replacement.length) {
      out += replacement[++i];
      continue;
    }
    const digits = char === '$' ? /^\d+/.exec(replacement.slice(i + 1))?.[0] : undefined;
    if (digits === undefined) {
      out += char;
      continue;
    }
    let index = digits.startsWith('0') ? 0 : Number(digits);
    let used = digits.startsWith('0') ? 1 : digits.length;
    while (index > groupCount && index >= 10) {
      index = Math.floor(index / 10);
      used--;
    }
    if (index > groupCount) {
      out += char;
      continue;
    }
    out += groups[index] ?? '';
    i += used;
  }
  return out;
}
