/** Every API key Spool declares, in key order. */
import type { ApiDef } from '../schema.js';
import { Produce } from './00-produce.js';

export { Produce };

export const allApis: readonly ApiDef[] = [Produce];
