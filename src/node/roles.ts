/**
 * process.roles: `broker`, `controller`, or both (a combined node). Kafka 4
 * has no ZooKeeper mode, so an empty or unknown role is a config error.
 */
import { ConfigError, type BrokerConfig } from '../common/config.js';
import type { ListenerRole } from '../server/handler.js';

const ROLES: readonly ListenerRole[] = ['broker', 'controller'];

export function processRoles(config: BrokerConfig): ReadonlySet<ListenerRole> {
  const listed = config.list('process.roles');
  const roles = new Set<ListenerRole>();
  for (const role of listed) {
    if (!(ROLES as readonly string[]).includes(role)) throw new ConfigError(`Unknown process role '${role}' (only 'broker' and 'controller' are allowed roles)`);
    roles.add(role as ListenerRole);
  }
  if (roles.size === 0) throw new ConfigError('process.roles must be set to broker, controller, or broker,controller');
  return roles;
}
