/** API keys 52 and up. */
import type { ApiDef } from '../schema.js';

export const apisC: readonly ApiDef[] = [];
