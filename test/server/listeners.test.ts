/**
 * Listener security protocols, resolved as Kafka resolves them
 * (listener.security.protocol.map; at its default, controller listeners are
 * PLAINTEXT unless a listener is named SSL or SASL_*), and the refusal to
 * start a listener whose protocol Spool does not speak.
 *
 * Bug pinned: `listeners=SASL_SSL://...` (or SASL_PLAINTEXT, or any name
 * mapped to them) started a plain socket and registered it as secure; both
 * startBroker() and `spool start` refuse before anything binds until SASL
 * exists. SSL is served (test/security/ssl-listener.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerConfig, ConfigError } from '../../src/common/config.js';
import { brokerListeners, listenerSecurityProtocols } from '../../src/server/listeners.js';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';

const config = (settings: Record<string, string>) => BrokerConfig.fromObject(settings);

test('at the default map, controller listeners are PLAINTEXT and protocol-named listeners speak their protocol', () => {
  const protocols = listenerSecurityProtocols(config({ listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093' }));
  assert.equal(protocols.get('PLAINTEXT'), 'PLAINTEXT');
  assert.equal(protocols.get('CONTROLLER'), 'PLAINTEXT');
  assert.equal(protocols.get('SSL'), 'SSL');
  assert.deepEqual(brokerListeners(config({ listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093' })).map((l) => [l.name, l.securityProtocol]), [
    ['PLAINTEXT', 'PLAINTEXT'],
    ['CONTROLLER', 'PLAINTEXT'],
  ]);
  // Kafka adds the controller's PLAINTEXT default only while no listener is named SSL or SASL_*.
  assert.equal(listenerSecurityProtocols(config({ listeners: 'SSL://:9092,CONTROLLER://:9093' })).get('CONTROLLER'), undefined);
});

test('an explicit map is used as written, names case-insensitively, and a listener missing from it stops the start', () => {
  const explicit = config({ listeners: 'client://:9092,CONTROLLER://:9093', 'listener.security.protocol.map': 'CLIENT:plaintext, CONTROLLER:PLAINTEXT' });
  assert.deepEqual(brokerListeners(explicit).map((l) => [l.name, l.securityProtocol]), [['CLIENT', 'PLAINTEXT'], ['CONTROLLER', 'PLAINTEXT']]);
  const missing = config({ listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT' });
  assert.throws(() => brokerListeners(missing), {
    name: 'ConfigError',
    message: "Error creating broker listeners from 'PLAINTEXT://:9092,CONTROLLER://:9093': No security protocol defined for listener CONTROLLER",
  });
  const unknown = config({ 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:TLS' });
  assert.throws(() => brokerListeners(unknown), { name: 'ConfigError', message: 'Invalid security protocol `TLS` defined in listener.security.protocol.map' });
});

test('SASL_PLAINTEXT and SASL_SSL listeners are refused, by name or through the map', () => {
  const cases: Record<string, string>[] = [
    { listeners: 'PLAINTEXT://:9092,SASL_PLAINTEXT://:9094,CONTROLLER://:9093', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT' },
    { listeners: 'EXTERNAL://:9092,CONTROLLER://:9093', 'listener.security.protocol.map': 'EXTERNAL:SASL_SSL,CONTROLLER:PLAINTEXT' },
    { listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT' },
  ];
  const refused = ['SASL_PLAINTEXT uses security protocol SASL_PLAINTEXT', 'EXTERNAL uses security protocol SASL_SSL', 'CONTROLLER uses security protocol SASL_PLAINTEXT'];
  cases.forEach((settings, index) => {
    assert.throws(() => brokerListeners(config(settings)), (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.ok(error.message.startsWith(`Listener ${refused[index]}, which Spool does not implement yet (only PLAINTEXT and SSL)`), error.message);
      return true;
    });
  });
  assert.deepEqual(brokerListeners(config({ listeners: 'SSL://:9092,CONTROLLER://:9093', 'listener.security.protocol.map': 'SSL:SSL,CONTROLLER:PLAINTEXT' })).map((l) => l.securityProtocol), ['SSL', 'PLAINTEXT']);
});

test('startBroker() refuses a SASL_SSL listener with the message, before anything binds', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-sasl-'));
  try {
    await assert.rejects(
      startBroker({ config: { 'log.dirs': dir, listeners: 'SASL_SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0', 'listener.security.protocol.map': 'SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT' }, logger: silentLogger }),
      { name: 'ConfigError', message: /^Listener SASL_SSL uses security protocol SASL_SSL, which Spool does not implement yet/ },
    );
    assert.deepEqual(readdirSync(dir), [], 'nothing written to the data directory');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
