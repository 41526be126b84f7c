/** Every API key Spool declares, in key order. */
import type { ApiDef } from '../schema.js';
import { apisA } from './index-a.js';
import { apisB } from './index-b.js';
import { apisC } from './index-c.js';

export const allApis: readonly ApiDef[] = [...apisA, ...apisB, ...apisC].sort((x, y) => x.key - y.key);
