/**
 * A JAAS configuration entry as Kafka reads `sasl.jaas.config`:
 * `<LoginModule class> <required|requisite|sufficient|optional> key="value" ...;`
 * Values are quoted strings (with backslash escapes) or bare words. Kafka's
 * JaasConfig allows exactly one login module per sasl.jaas.config.
 */
export interface JaasEntry {
  loginModule: string;
  controlFlag: 'required' | 'requisite' | 'sufficient' | 'optional';
  options: ReadonlyMap<string, string>;
}

export class JaasConfigError extends Error {
  override readonly name = 'JaasConfigError';
}

const TOKEN = /\s*(?:"((?:\\.|[^"\\])*)"|([^\s=;"]+)|(=)|(;))/y;

function tokens(text: string): { value: string; quoted: boolean }[] {
  const out: { value: string; quoted: boolean }[] = [];
  TOKEN.lastIndex = 0;
  let match: RegExpExecArray | null;
  while (TOKEN.lastIndex < text.length && (match = TOKEN.exec(text)) !== null) {
    if (match[1] !== undefined) out.push({ value: match[1].replace(/\\(.)/g, '$1'), quoted: true });
    else out.push({ value: match[2] ?? match[3] ?? match[4]!, quoted: false });
  }
  if (text.slice(TOKEN.lastIndex).trim() !== '') throw new JaasConfigError(`Unexpected text in JAAS config: ${text.slice(TOKEN.lastIndex)}`);
  return out;
}

export function parseJaasConfig(text: string): JaasEntry {
  const parts = tokens(text);
  const [module, flag] = parts;
  if (module === undefined || flag === undefined) throw new JaasConfigError('JAAS config entry needs a login module and a control flag');
  const controlFlag = flag.value.toLowerCase();
  if (controlFlag !== 'required' && controlFlag !== 'requisite' && controlFlag !== 'sufficient' && controlFlag !== 'optional') {
    throw new JaasConfigError(`Invalid control flag ${flag.value} in JAAS config`);
  }
  const options = new Map<string, string>();
  let index = 2;
  while (index < parts.length && parts[index]!.value !== ';') {
    const key = parts[index];
    const equals = parts[index + 1];
    const value = parts[index + 2];
    if (key === undefined || equals?.value !== '=' || equals.quoted || value === undefined) throw new JaasConfigError(`Invalid JAAS config option near ${key?.value ?? 'the end'}`);
    options.set(key.value, value.value);
    index += 3;
  }
  if (parts[index]?.value !== ';') throw new JaasConfigError('JAAS config entry must end with ;');
  if (index + 1 !== parts.length) throw new JaasConfigError('JAAS config in property sasl.jaas.config must have exactly one login module');
  return { loginModule: module.value, controlFlag, options };
}
