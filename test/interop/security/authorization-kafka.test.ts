/**
 * The deny-path table of test/server/authorization.test.ts (the same rows,
 * requests and expected answers, from test/server/authorization-table.ts)
 * played against Apache Kafka 4.4 with
 * authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer,
 * so that Spool and Kafka are shown to agree: for each API key, User:alice
 * with no ACL is refused with the same *_AUTHORIZATION_FAILED error, and the
 * ACLs Spool requires are the ones that let the request through on Kafka.
 * One Kafka broker serves the whole table: a SASL_PLAINTEXT listener where
 * alice and the super user admin log in with PLAIN, next to the harness's
 * PLAINTEXT listener (User:ANONYMOUS, a super user because the broker's
 * own registration with its controller needs CLUSTER_ACTION).
 */
import { test } from 'node:test';
import { freePort, freePortPair, kafkaSkipReason, startKafka } from '../kafka/kafka.js';
import { runDenyPathTable } from '../../server/authorization-table.js';

test('deny-path table against Kafka 4.4 with its StandardAuthorizer: the same refusals, and the same ACLs let each request through', { skip: kafkaSkipReason(), timeout: 300_000 }, async () => {
  const port = await freePortPair();
  const saslPort = await freePort();
  const kafka = await startKafka({ port, extraConfig: securedKafka(port, saslPort) });
  try {
    await runDenyPathTable(`127.0.0.1:${saslPort}`);
  } finally {
    await kafka.stop();
  }
});

/**
 * Lines appended to kafka.sh's server.properties: Java's Properties keeps a
 * repeated key's last value, so these listeners replace the harness's
 * (PLAINTEXT on `port`, CONTROLLER on `port + 1`) with the SASL one added.
 */
function securedKafka(port: number, saslPort: number): string[] {
  return [
    `listeners=PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort},CONTROLLER://127.0.0.1:${port + 1}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
    'sasl.enabled.mechanisms=PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";',
    'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users=User:admin;User:ANONYMOUS',
    'connection.failed.authentication.delay.ms=0',
  ];
}
