/** API keys 24-51. */
import type { ApiDef } from '../schema.js';

export const apisB: readonly ApiDef[] = [];
