/**
 * A real Spool process with one secured listener beside the PLAINTEXT one
 * that startSpool waits on, and the Kafka tool runner the security interop
 * tests share.
 */
import assert from 'node:assert/strict';
import { runKafkaTool } from '../kafka/kafka.js';
import { freePort, startSpool, type SpoolProcess } from '../clients/spool-process.js';

process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

/** Starts Spool with `<protocol>://127.0.0.1:<port>` as an extra listener named after its protocol. */
export async function startSecuredSpool(protocol: 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL', settings: readonly string[]): Promise<{ spool: SpoolProcess; bootstrap: string }> {
  const port = await freePort();
  const securedPort = await freePort();
  const controllerPort = await freePort();
  const spool = await startSpool({
    port,
    overrides: [
      `listeners=PLAINTEXT://127.0.0.1:${port},${protocol}://127.0.0.1:${securedPort},CONTROLLER://127.0.0.1:${controllerPort}`,
      `listener.security.protocol.map=PLAINTEXT:PLAINTEXT,${protocol}:${protocol},CONTROLLER:PLAINTEXT`,
      ...settings,
    ],
  });
  return { spool, bootstrap: `127.0.0.1:${securedPort}` };
}

/** Runs a Kafka 4.4 tool and returns its stdout; fails the test when it exits non-zero. */
export async function kafkaTool(mainClass: string, args: readonly string[], input?: string): Promise<string> {
  const result = await runKafkaTool(mainClass, args, input === undefined ? {} : { input });
  assert.equal(result.code, 0, `${mainClass} ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}
