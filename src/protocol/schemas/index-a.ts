/** API keys 0-23. */
import type { ApiDef } from '../schema.js';
import { Produce } from './00-produce.js';

export const apisA: readonly ApiDef[] = [Produce];
