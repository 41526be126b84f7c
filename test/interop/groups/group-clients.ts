/**
 * The clients the group interop tests drive, each as a GroupClient (how to
 * start one member process) plus what it needs installed. Built or installed
 * by test/interop/groups/ci-setup.sh:
 *   kafkajs        kafkajs-member.ts (npm kafkajs), compiled with the tests
 *   kafka-javascript kafka-javascript-member.ts (npm @confluentinc/kafka-javascript, compiled with the
 *                  tests; its addon built by test/interop/kafka-javascript/ci-setup.sh)
 *   confluent      python/group_consumer.py on Debian's python3-confluent-kafka (librdkafka 2.0)
 *   confluent-pypi the same driver in venv/ with confluent-kafka from PyPI (a librdkafka with KIP-848)
 *   kafka-python   python/group_consumer.py on Debian's python3-kafka
 *   java           java/GroupConsumer.java on kafka-clients 4.4.0 (test/interop/java-client/lib)
 *   franz-go       go/main.go, built into go/bin/franz-group
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasCommand } from '../clients/harness.js';
import { KAFKA_JAVASCRIPT_MEMBER, kafkaJavascriptMissing } from '../kafka-javascript/addon.js';
import { DEBIAN_PYTHON, PYPI_PYTHON, pythonHas } from '../clients/python.js';
import { missingToolSkip } from '../clients/scenario.js';
import type { GroupClient } from './group-scenario.js';
import type { MemberConfig } from './members.js';

/** test/interop/groups/ in the source tree (this file runs from dist/test/interop/groups/). */
export const GROUPS_DIR = fileURLToPath(new URL('../../../../test/interop/groups/', import.meta.url));
const JAVA_LIB = fileURLToPath(new URL('../../../../test/interop/java-client/lib/', import.meta.url));
const PYTHON_DRIVER = join(GROUPS_DIR, 'python', 'group_consumer.py');
const JAVA_CLASSES = join(GROUPS_DIR, 'java', 'classes');
const FRANZ = join(GROUPS_DIR, 'go', 'bin', 'franz-group');
const KAFKAJS_MEMBER = fileURLToPath(new URL('./kafkajs-member.js', import.meta.url));
const SETUP = join(GROUPS_DIR, 'ci-setup.sh');

type Protocol = GroupClient['protocol'];
const json = (config: MemberConfig): string => JSON.stringify(config);

export function kafkajsClient(): GroupClient {
  return {
    name: 'kafkajs', protocol: 'classic', assignor: null, clientPattern: /^kafkajs 2\./, expectedAssignor: 'RoundRobinAssigner',
    missing: () => missingToolSkip(existsSync(KAFKAJS_MEMBER), 'kafkajs member not compiled (npx tsc -p .)'),
    command: (config) => ({ file: process.execPath, args: [KAFKAJS_MEMBER, json(config)] }),
  };
}

/** @confluentinc/kafka-javascript (librdkafka 2.15): classic or KIP-848. */
export function kafkaJavascriptClient(protocol: Protocol, assignor: string | null): GroupClient {
  return {
    name: `kafka-javascript-${protocol}-${assignor ?? 'default'}`, protocol, assignor,
    clientPattern: /^@confluentinc\/kafka-javascript \d+\.\d+\.\d+, librdkafka \d+\.\d+\.\d+/,
    expectedAssignor: assignor ?? (protocol === 'consumer' ? 'uniform' : 'range'),
    missing: kafkaJavascriptMissing,
    command: (config) => ({ file: process.execPath, args: [KAFKA_JAVASCRIPT_MEMBER, json(config)] }),
  };
}

/** confluent-kafka-python on Debian's librdkafka (classic only) or, with `pypi`, from PyPI in venv/. */
export function confluentClient(protocol: Protocol, assignor: string | null, pypi: boolean): GroupClient {
  const python = pypi ? PYPI_PYTHON : DEBIAN_PYTHON;
  return {
    name: `confluent${pypi ? '-pypi' : ''}-${protocol}-${assignor ?? 'default'}`, protocol, assignor,
    clientPattern: /^confluent-kafka-python \d+\.\d+\.\d+, librdkafka \d+\.\d+\.\d+/,
    expectedAssignor: assignor ?? (protocol === 'consumer' ? 'uniform' : 'range'),
    missing: () => pythonMissing(python, 'confluent_kafka'),
    command: (config) => ({ file: python, args: [PYTHON_DRIVER, json({ ...config, library: 'confluent' })] }),
  };
}

export function kafkaPythonClient(assignor: string | null): GroupClient {
  return {
    name: `kafka-python-${assignor ?? 'default'}`, protocol: 'classic', assignor, clientPattern: /^kafka-python \d/, expectedAssignor: assignor ?? 'range',
    missing: () => pythonMissing(DEBIAN_PYTHON, 'kafka'),
    command: (config) => ({ file: DEBIAN_PYTHON, args: [PYTHON_DRIVER, json({ ...config, library: 'kafka-python' })] }),
  };
}

export function javaClient(protocol: Protocol, assignor: string | null): GroupClient {
  return {
    name: `java-${protocol}-${assignor ?? 'default'}`, protocol, assignor, clientPattern: /^kafka-clients 4\.4\.0$/,
    // The Java consumer's classic default is [range, cooperative-sticky]: the group picks range.
    expectedAssignor: assignor ?? (protocol === 'consumer' ? 'uniform' : 'range'),
    missing: () => missingToolSkip(hasCommand('java') && existsSync(join(JAVA_CLASSES, 'GroupConsumer.class')), `java or GroupConsumer.class missing: run ${SETUP}`),
    command: (config) => ({
      file: 'java',
      args: ['-Xmx128m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-cp', `${JAVA_LIB}*:${JAVA_CLASSES}`, 'GroupConsumer', json(config)],
    }),
  };
}

export function franzClient(protocol: Protocol, assignor: string | null): GroupClient {
  return {
    name: `franz-go-${protocol}-${assignor ?? 'default'}`, protocol, assignor, clientPattern: /^franz-go v1\./,
    // franz-go's classic default is cooperative-sticky; for KIP-848 its sticky balancer asks for "uniform".
    expectedAssignor: protocol === 'consumer' ? (assignor === 'range' ? 'range' : 'uniform') : assignor ?? 'cooperative-sticky',
    missing: () => missingToolSkip(existsSync(FRANZ), `franz-go group driver not built: run ${SETUP}`),
    command: (config) => ({ file: FRANZ, args: [json(config)] }),
  };
}

/** A skip message unless `python` imports `module` (throws with CI=true). */
function pythonMissing(python: string, module: string): string | undefined {
  return missingToolSkip(pythonHas([module], python), `${python} cannot import ${module}: run ${SETUP}`);
}

/**
 * One configuration of every group client, as the load and failover tests run them: classic and KIP-848 where the
 * client has both, cooperative-sticky where it has it (but on Debian's librdkafka 2.0.2, which takes range).
 */
export function groupClientMatrix(): GroupClient[] {
  return [
    kafkajsClient(),
    confluentClient('classic', 'range', false),
    confluentClient('classic', 'cooperative-sticky', true),
    confluentClient('consumer', null, true),
    kafkaJavascriptClient('classic', 'cooperative-sticky'),
    kafkaJavascriptClient('consumer', null),
    kafkaPythonClient('range'),
    javaClient('classic', 'cooperative-sticky'),
    javaClient('consumer', null),
    franzClient('classic', 'cooperative-sticky'),
    franzClient('consumer', null),
  ];
}
