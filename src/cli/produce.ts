/**
 * `spool produce`: kafka-console-producer.sh. Reads stdin line by line and
 * sends each line as a record. Reader properties (--property, as Kafka's
 * LineMessageReader): parse.key with key.separator (default tab),
 * parse.headers with headers.delimiter (tab), headers.separator (,) and
 * headers.key.separator (:), null.marker, ignore.error. The line layout is
 * `headers<delimiter>key<separator>value`.
 */
import type { Command } from 'commander';
import { Producer, type ProducerOptions, type ProducerRecord } from '../client/producer.js';
import { applyProducerProperties, parseAcks, parseCompression } from './client-config.js';
import { CliError, collect, DEFAULT_BOOTSTRAP_SERVER, parseKeyValues, type CliIo } from './io.js';

interface ProduceFlags {
  bootstrapServer: string;
  topic?: string;
  property: string[];
  readerProperty: string[];
  producerProperty: string[];
  compressionCodec?: string | true;
  requestRequiredAcks: string;
  timeout: string;
  batchSize?: string;
  sync?: boolean;
}

export interface LineReaderSettings {
  parseKey: boolean;
  keySeparator: string;
  parseHeaders: boolean;
  headersDelimiter: string;
  headersSeparator: string;
  headersKeySeparator: string;
  nullMarker: string | null;
  ignoreError: boolean;
}

export function lineReaderSettings(properties: ReadonlyMap<string, string>): LineReaderSettings {
  return {
    parseKey: properties.get('parse.key')?.trim().toLowerCase() === 'true',
    keySeparator: properties.get('key.separator') ?? '\t',
    parseHeaders: properties.get('parse.headers')?.trim().toLowerCase() === 'true',
    headersDelimiter: properties.get('headers.delimiter') ?? '\t',
    headersSeparator: properties.get('headers.separator') ?? ',',
    headersKeySeparator: properties.get('headers.key.separator') ?? ':',
    nullMarker: properties.get('null.marker') ?? null,
    ignoreError: properties.get('ignore.error')?.trim().toLowerCase() === 'true',
  };
}

/** Turns one input line into a record, as Kafka's LineMessageReader does. */
export function parseLine(line: string, lineNumber: number, settings: LineReaderSettings): Omit<ProducerRecord, 'topic'> {
  let rest = line;
  const record: { key?: string | null; value?: string | null; headers?: { key: string; value: string | null }[] } = {};
  const nullable = (text: string): string | null => (settings.nullMarker !== null && text === settings.nullMarker ? null : text);
  if (settings.parseHeaders) {
    const at = rest.indexOf(settings.headersDelimiter);
    if (at < 0) {
      if (!settings.ignoreError) throw new CliError(`No headers delimiter found on line number ${lineNumber}: '${line}'`);
    } else {
      record.headers = rest.slice(0, at).split(settings.headersSeparator).filter((h) => h !== '').map((header) => {
        const split = header.indexOf(settings.headersKeySeparator);
        return split < 0 ? { key: header, value: null } : { key: header.slice(0, split), value: nullable(header.slice(split + settings.headersKeySeparator.length)) };
      });
      rest = rest.slice(at + settings.headersDelimiter.length);
    }
  }
  if (settings.parseKey) {
    const at = rest.indexOf(settings.keySeparator);
    if (at < 0) {
      if (!settings.ignoreError) throw new CliError(`No key separator found on line number ${lineNumber}: '${line}'`);
    } else {
      record.key = nullable(rest.slice(0, at));
      rest = rest.slice(at + settings.keySeparator.length);
    }
  }
  record.value = nullable(rest);
  return record;
}

export function producerOptionsFromFlags(flags: ProduceFlags, io: CliIo): ProducerOptions {
  const options: ProducerOptions = {
    bootstrapServers: flags.bootstrapServer,
    env: io.env,
    clientId: 'console-producer',
    acks: parseAcks(flags.requestRequiredAcks),
    lingerMs: Number(flags.timeout),
  };
  if (flags.compressionCodec !== undefined) options.compression = flags.compressionCodec === true ? 'gzip' : parseCompression(flags.compressionCodec);
  if (flags.batchSize !== undefined) options.batchSize = Number(flags.batchSize);
  return applyProducerProperties(options, parseKeyValues(flags.producerProperty));
}

export function registerProduce(program: Command, io: CliIo): void {
  program
    .command('produce')
    .description('Send lines from standard input as records (like kafka-console-producer.sh)')
    .option('--bootstrap-server <server>', 'the broker to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .option('--topic <topic>', 'the topic to produce to')
    .option('--property <name=value>', 'line reader property: parse.key, key.separator, parse.headers, headers.delimiter, headers.separator, headers.key.separator, null.marker, ignore.error (repeatable)', collect, [])
    .option('--reader-property <name=value>', 'same as --property', collect, [])
    .option('--producer-property <name=value>', 'a producer config, e.g. acks=1 or linger.ms=0 (repeatable)', collect, [])
    .option('--compression-codec [codec]', 'none, gzip (the default when given without a value), snappy, lz4 or zstd')
    .option('--request-required-acks <acks>', 'acks: all, -1, 0 or 1', 'all')
    .option('--timeout <ms>', 'linger.ms: how long a record may wait for its batch to fill', '1000')
    .option('--batch-size <bytes>', 'batch.size')
    .option('--sync', 'wait for each record to be acknowledged before reading the next line')
    .action(async (flags: ProduceFlags) => {
      if (flags.topic === undefined) throw new CliError('Missing required argument "[topic]"');
      const settings = lineReaderSettings(parseKeyValues([...flags.property, ...flags.readerProperty]));
      const producer = new Producer(producerOptionsFromFlags(flags, io));
      const failures = await produceLines(producer, flags.topic, settings, io, flags.sync === true);
      if (failures > 0) throw new CliError(`${failures} record(s) could not be sent`);
    });
}

async function produceLines(producer: Producer, topic: string, settings: LineReaderSettings, io: CliIo, sync: boolean): Promise<number> {
  let failures = 0;
  let lineNumber = 0;
  const onError = (error: Error): void => {
    failures++;
    io.stderr(`Error when sending message to topic ${topic}: ${error.message}\n`);
  };
  try {
    for await (const line of io.stdinLines()) {
      lineNumber++;
      const sent = producer.send({ topic, ...parseLine(line, lineNumber, settings) });
      if (sync) await sent.catch(onError);
      else sent.catch(onError);
    }
  } finally {
    await producer.close();
  }
  return failures;
}
