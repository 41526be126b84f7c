/**
 * The text formats shared with the Java helpers in java/: the input of
 * ProduceRecords (records to send with the real Java producer) and the
 * output of DumpRecords (batches and records as Kafka's own FileRecords
 * decodes them from a partition directory). Keys, values and header values
 * travel as base64, null as "-", one item per line, tab-separated.
 */

export interface KafkaHeader {
  key: string;
  value: Buffer | null;
}

/** A record as sent (ProduceRecords input) or as decoded by Kafka (DumpRecords output). */
export interface KafkaRecord {
  key: Buffer | null;
  value: Buffer | null;
  /** Epoch ms; null in a ProduceRecords line means "the producer's clock". */
  timestampMs: number | null;
  headers: KafkaHeader[];
}

/** One ProduceRecords input line: a record, or a directive (`#config k=v ...`, `#begin`, `#commit`, `#abort`). */
export type ProduceLine = ({ kind: 'record'; partition?: number } & KafkaRecord) | { kind: 'directive'; text: string };

export function formatProduceLines(lines: readonly ProduceLine[]): string {
  return lines.map((line) => (line.kind === 'directive' ? line.text : formatRecordLine(line))).join('\n') + '\n';
}

function formatRecordLine(record: { partition?: number } & KafkaRecord): string {
  return [
    record.partition === undefined ? '-' : String(record.partition),
    base64OrDash(record.key),
    base64OrDash(record.value),
    record.timestampMs === null ? '-' : String(record.timestampMs),
    formatHeaders(record.headers),
  ].join('\t');
}

function formatHeaders(headers: readonly KafkaHeader[]): string {
  if (headers.length === 0) return '-';
  return headers.map((h) => `${Buffer.from(h.key, 'utf8').toString('base64')}:${base64OrDash(h.value)}`).join(',');
}

function base64OrDash(bytes: Buffer | null): string {
  return bytes === null ? '-' : bytes.toString('base64');
}

function bytesOrNull(field: string): Buffer | null {
  return field === '-' ? null : Buffer.from(field, 'base64');
}

/** A batch as Kafka's FileRecords sees it (DumpRecords `batch` line). */
export interface KafkaBatch {
  baseOffset: number;
  lastOffset: number;
  compression: string;
  timestampType: string;
  maxTimestampMs: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  isTransactional: boolean;
  isControl: boolean;
  partitionLeaderEpoch: number;
  recordCount: number;
  /** Byte position of the batch in its segment file. */
  position: number;
  segmentBaseOffset: number;
  records: (KafkaRecord & { offset: number })[];
}

export interface KafkaSegmentEnd {
  segmentBaseOffset: number;
  /** Bytes covered by whole, valid batches. */
  validBytes: number;
  fileBytes: number;
}

export interface DumpedPartition {
  batches: KafkaBatch[];
  segments: KafkaSegmentEnd[];
}

/** Parses DumpRecords' stdout. Throws on a line it does not know. */
export function parseDumpRecords(stdout: string): DumpedPartition {
  const batches: KafkaBatch[] = [];
  const segments: KafkaSegmentEnd[] = [];
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    const f = line.split('\t');
    if (f[0] === 'batch') batches.push(parseBatchLine(f));
    else if (f[0] === 'record') batches.at(-1)!.records.push(parseRecordLine(f));
    else if (f[0] === 'end') segments.push({ segmentBaseOffset: Number(f[1]), validBytes: Number(f[2]), fileBytes: Number(f[3]) });
    else throw new Error(`unexpected DumpRecords line: ${line}`);
  }
  return { batches, segments };
}

function parseBatchLine(f: string[]): KafkaBatch {
  if (f.length !== 15) throw new Error(`batch line with ${f.length} fields`);
  const n = (i: number) => Number(f[i]);
  return {
    baseOffset: n(1),
    lastOffset: n(2),
    compression: f[3]!,
    timestampType: f[4]!,
    maxTimestampMs: n(5),
    producerId: n(6),
    producerEpoch: n(7),
    baseSequence: n(8),
    isTransactional: f[9] === 'true',
    isControl: f[10] === 'true',
    partitionLeaderEpoch: n(11),
    recordCount: n(12),
    position: n(13),
    segmentBaseOffset: n(14),
    records: [],
  };
}

function parseRecordLine(f: string[]): KafkaRecord & { offset: number } {
  if (f.length !== 6) throw new Error(`record line with ${f.length} fields`);
  return {
    offset: Number(f[1]),
    timestampMs: Number(f[2]),
    key: bytesOrNull(f[3]!),
    value: bytesOrNull(f[4]!),
    headers: parseHeaders(f[5]!),
  };
}

function parseHeaders(field: string): KafkaHeader[] {
  if (field === '-') return [];
  return field.split(',').map((h) => {
    const [name, value] = h.split(':') as [string, string];
    return { key: Buffer.from(name, 'base64').toString('utf8'), value: bytesOrNull(value) };
  });
}
