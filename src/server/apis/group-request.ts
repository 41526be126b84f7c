/**
 * Shared by the group handlers (keys 8-16, 42, 47, 68, 69): the client
 * identity a group member is recorded with, in Kafka's words. Kafka stores
 * a member's host as InetAddress.toString(), "/127.0.0.1", which is what
 * `kafka-consumer-groups.sh --describe` prints in its HOST column.
 */
import type { RequestContext } from '../handler.js';

/** Kafka's clientHost: "/" + the address, IPv4-mapped IPv6 shown as IPv4. */
export function clientHostOf(context: RequestContext): string {
  const address = context.clientAddress.startsWith('::ffff:') ? context.clientAddress.slice(7) : context.clientAddress;
  return `/${address}`;
}

export function groupRequestContext(context: RequestContext): { clientId: string; clientHost: string; apiVersion: number } {
  return { clientId: context.clientId, clientHost: clientHostOf(context), apiVersion: context.apiVersion };
}

/** AclOperation bits for a group with no authorizer: READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10), ALTER_CONFIGS (11). */
export const GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;
