/**
 * Listener security protocols, resolved as Kafka resolves them
 * (listener.security.protocol.map; at its default, controller listeners are
 * PLAINTEXT unless a listener is named SSL or SASL_*), and the refusal to
 * start a listener whose protocol is missing from the map. What each
 * protocol serves is tested in test/security/.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConfig } from '../../src/common/config.js';
import { brokerListeners, listenerSecurityProtocols } from '../../src/server/listeners.js';

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

test('every protocol, by name or through the map, gets its listener', () => {
  const settings = { listeners: 'SSL://:9092,SASL_PLAINTEXT://:9094,EXTERNAL://:9095,CONTROLLER://:9093', 'listener.security.protocol.map': 'SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,EXTERNAL:SASL_SSL,CONTROLLER:PLAINTEXT' };
  assert.deepEqual(brokerListeners(config(settings)).map((l) => l.securityProtocol), ['SSL', 'SASL_PLAINTEXT', 'SASL_SSL', 'PLAINTEXT']);
});
