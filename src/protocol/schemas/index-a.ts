/** API keys 0-23. */
import type { ApiDef } from '../schema.js';
import { Produce } from './00-produce.js';
import { Fetch } from './01-fetch.js';
import { ListOffsets } from './02-list-offsets.js';
import { Metadata } from './03-metadata.js';

export const apisA: readonly ApiDef[] = [
  Produce,
  Fetch,
  ListOffsets,
  Metadata,
];
