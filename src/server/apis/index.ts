/**
 * Every API handler the broker serves, one file per API key (STYLE.md §2).
 * ApiVersions advertises exactly this list.
 */
import type { ApiHandler } from '../handler.js';
import type { Broker } from '../broker.js';
import { apiVersionsHandler } from './18-api-versions.js';

export function createHandlers(broker: Broker): ApiHandler[] {
  return [
    apiVersionsHandler(broker),
  ] as ApiHandler[];
}
