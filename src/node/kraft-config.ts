/**
 * process.roles and the KRaft settings that go with each role, checked as
 * Kafka's KafkaConfig checks them when a node starts, with its messages
 * (a `require` in Kafka's Scala reads "requirement failed: ...").
 *
 *   broker              needs the quorum (voters or bootstrap servers), a
 *                       controller.listener.names entry to reach it, and no
 *                       controller listener of its own; not a voter itself.
 *   controller          only controller listeners; a voter when the voters
 *                       are static.
 *   broker,controller   a voter when the voters are static; its controller
 *                       listener names all among `listeners`.
 *   with broker         an advertised broker listener, the
 *                       inter.broker.listener.name among them, none on
 *                       0.0.0.0, all among `listeners`.
 *
 * One deliberate difference: a combined node with neither
 * controller.quorum.voters nor controller.quorum.bootstrap.servers is a
 * standalone quorum of itself (what `spool start` with no properties file
 * and the embedded nodes run), where Kafka refuses to start.
 */
import { ConfigError, parseListeners, type BrokerConfig } from '../common/config.js';
import { QUORUM_BOOTSTRAP_SERVERS_CONFIG, QUORUM_VOTERS_CONFIG, parseQuorumBootstrapServers, parseQuorumVoters, type HostAndPort, type QuorumVoter } from '../common/quorum-config.js';
import { interBrokerListenerName, listenerSecurityProtocols } from '../server/listeners.js';
import type { ListenerRole } from '../server/handler.js';

const ROLES: readonly ListenerRole[] = ['broker', 'controller'];
const NON_ROUTABLE_HOST = '0.0.0.0';

export interface KRaftConfig {
  roles: ReadonlySet<ListenerRole>;
  /** controller.quorum.voters; empty when the voters are dynamic or the node is standalone. */
  voters: readonly QuorumVoter[];
  bootstrapServers: readonly HostAndPort[];
}

/** Kafka's requirement failure: an IllegalArgumentException from Scala's require. */
function require(condition: boolean, message: string): void {
  if (!condition) throw new ConfigError(`requirement failed: ${message}`);
}

export function processRoles(config: BrokerConfig): ReadonlySet<ListenerRole> {
  const roles = new Set<ListenerRole>();
  for (const role of config.list('process.roles')) {
    if (!(ROLES as readonly string[]).includes(role)) throw new ConfigError(`Unknown process role '${role}' (only 'broker' and 'controller' are allowed roles)`);
    roles.add(role as ListenerRole);
  }
  if (roles.size === 0) throw new ConfigError('process.roles must be set to broker, controller, or broker,controller');
  return roles;
}

export function validateKRaftConfig(config: BrokerConfig): KRaftConfig {
  const roles = processRoles(config);
  const voters = parseQuorumVoters(config.list(QUORUM_VOTERS_CONFIG));
  const bootstrapServers = parseQuorumBootstrapServers(config.list(QUORUM_BOOTSTRAP_SERVERS_CONFIG));
  const standalone = roles.size === 2 && voters.length === 0 && bootstrapServers.length === 0;
  if (voters.length === 0 && bootstrapServers.length === 0 && !standalone) {
    throw new ConfigError(
      `If using process.roles, either ${QUORUM_BOOTSTRAP_SERVERS_CONFIG} must contain the set of bootstrap controllers or ${QUORUM_VOTERS_CONFIG} must contain a parseable set of controllers.`,
    );
  }
  if (roles.has('controller')) validateController(config, roles, voters);
  else validateBrokerOnly(config, voters);
  if (roles.has('broker')) validateBrokerListeners(config);
  return { roles, voters, bootstrapServers };
}

const voterSet = (voters: readonly QuorumVoter[]) => `${QUORUM_VOTERS_CONFIG}=Set(${[...new Set(voters.map((v) => v.id))].join(', ')})`;

function validateBrokerOnly(config: BrokerConfig, voters: readonly QuorumVoter[]): void {
  const nodeId = config.int('node.id');
  const controllerNames = config.list('controller.listener.names');
  const listenerNames = parseListeners(config.list('listeners')).map((l) => l.name);
  require(!voters.some((v) => v.id === nodeId), `If process.roles contains just the 'broker' role, the node id ${nodeId} must not be included in the set of voters ${voterSet(voters)}`);
  require(controllerNames.length > 0, 'controller.listener.names must contain at least one value when running KRaft with just the broker role');
  require(
    !listenerNames.some((name) => controllerNames.includes(name)),
    "controller.listener.names must not contain a value appearing in the 'listeners' configuration when running KRaft with just the broker role",
  );
  const protocols = listenerSecurityProtocols(config);
  for (const name of controllerNames) {
    if (!protocols.has(name.toUpperCase())) {
      throw new ConfigError(
        `Controller listener with name ${name.toUpperCase()} defined in controller.listener.names not found in listener.security.protocol.map  (an explicit security mapping for each controller listener is required if listener.security.protocol.map is non-empty, or if there are security protocols other than PLAINTEXT in use)`,
      );
    }
  }
}

function validateController(config: BrokerConfig, roles: ReadonlySet<ListenerRole>, voters: readonly QuorumVoter[]): void {
  const nodeId = config.int('node.id');
  const controllerNames = config.list('controller.listener.names');
  const listenerNames = parseListeners(config.list('listeners')).map((l) => l.name);
  const controllerListeners = listenerNames.filter((name) => controllerNames.includes(name));
  if (!roles.has('broker')) {
    require(
      controllerListeners.length === listenerNames.length,
      'The listeners config must only contain KRaft controller listeners from controller.listener.names when process.roles=controller',
    );
  }
  require(voters.length === 0 || voters.some((v) => v.id === nodeId), `If process.roles contains the 'controller' role, the node id ${nodeId} must be included in the set of voters ${voterSet(voters)}`);
  require(controllerListeners.length > 0, "controller.listener.names must contain at least one value appearing in the 'listeners' configuration when running the KRaft controller role");
  require(
    controllerNames.every((name) => listenerNames.includes(name)),
    "controller.listener.names must only contain values appearing in the 'listeners' configuration when running the KRaft controller role",
  );
}

function validateBrokerListeners(config: BrokerConfig): void {
  const controllerNames = config.list('controller.listener.names');
  const listeners = parseListeners(config.list('listeners'));
  const announced = config.list('advertised.listeners').length > 0 ? parseListeners(config.list('advertised.listeners')) : listeners;
  const advertised = announced.filter((l) => !controllerNames.includes(l.name));
  const advertisedNames = [...new Set(advertised.map((l) => l.name))];
  const listenerNames = [...new Set(listeners.map((l) => l.name))];
  require(advertisedNames.length > 0, 'There must be at least one broker advertised listener. Perhaps all listeners appear in controller.listener.names?');
  const interBroker = interBrokerListenerName(config);
  require(
    advertisedNames.includes(interBroker),
    `inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are ${advertisedNames.join(',')}`,
  );
  require(
    advertisedNames.every((name) => listenerNames.includes(name)),
    `advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found ${advertisedNames.join(',')}. The valid options based on the current configuration are ${listenerNames.join(',')}`,
  );
  require(!advertised.some((l) => l.host === NON_ROUTABLE_HOST), 'advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.');
}
