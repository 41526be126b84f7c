/** PushTelemetry (key 72): a client pushes its metrics to the broker in OTLP form (KIP-714). */
import { api, field } from '../schema.js';

export const PushTelemetry = api({
  key: 72,
  name: 'PushTelemetry',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('clientInstanceId', 'uuid', '0+'),
    field('subscriptionId', 'int32', '0+'),
    field('terminating', 'bool', '0+'),
    field('compressionType', 'int8', '0+'),
    field('metrics', 'bytes', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
  ],
});
