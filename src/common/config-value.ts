/**
 * The one parser of config text, for topic and broker configs alike (Kafka's
 * ConfigDef.parseType). Values are typed: short, int and long as number (a
 * long as src/protocol/int64.ts carries it: Long.MAX_VALUE is Infinity),
 * double as number, boolean, string, and list as string[]. Beside each value
 * the parser returns its text as Kafka's DescribeConfigs shows it
 * (ConfigDef.convertToString), computed from the exact value, so a long
 * beyond 2^53 is shown as it was set.
 */
import { int64FromBigInt, int64Text, parseInt64 } from '../protocol/int64.js';

/** Kafka's ConfigDef types; topic configs use the first six. */
export type ConfigType = 'boolean' | 'string' | 'int' | 'long' | 'double' | 'list' | 'short' | 'password' | 'class';
export type TopicConfigType = 'boolean' | 'string' | 'int' | 'long' | 'double' | 'list';
export type TopicConfigValue = number | boolean | string | readonly string[];

/** A parsed value and its text as DescribeConfigs shows it, or Kafka's error message. */
export type ParseResult = { value: TopicConfigValue; text: string } | { error: string };

/** The range of each integral type (Java's short, int and long). */
const INTEGRAL_BITS = { short: 16, int: 32, long: 64 } as const;

/** Parses text as Kafka's ConfigDef does for `type` (trimmed; lists split on commas). */
export function parseConfigValue(name: string, type: ConfigType, raw: string): ParseResult {
  const text = raw.trim();
  const invalid = (reason: string): ParseResult => ({ error: `Invalid value ${raw} for configuration ${name}: ${reason}` });
  switch (type) {
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower === 'true' || lower === 'false') return { value: lower === 'true', text: lower };
      return invalid('Expected value to be either true or false');
    }
    case 'short':
    case 'int':
    case 'long': {
      const exact = parseInt64(text);
      if (exact === null || BigInt.asIntN(INTEGRAL_BITS[type], exact) !== exact) return invalid(`Not a number of type ${type.toUpperCase()}`);
      return { value: int64FromBigInt(exact), text: exact.toString() };
    }
    case 'double': {
      const value = Number(text);
      if (text === '' || !Number.isFinite(value) || !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[dDfF]?$/.test(text)) {
        return invalid('Not a number of type DOUBLE');
      }
      return { value, text: describeValue(type, value) };
    }
    case 'list': {
      const value = text === '' ? [] : text.split(/\s*,\s*/);
      return { value, text: describeValue(type, value) };
    }
    case 'string':
    case 'password':
    case 'class':
      return { value: text, text };
  }
}

/** Renders a value as Kafka's DescribeConfigs shows it (exact for longs within ±2^53 and for Long.MAX/MIN_VALUE). */
export function describeValue(type: ConfigType, value: TopicConfigValue): string {
  if (type === 'list') return (value as readonly string[]).join(',');
  if (type === 'long') return int64Text(value as number);
  if (type === 'double' && Number.isInteger(value)) return `${value}.0`;
  return String(value);
}

