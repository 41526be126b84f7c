/** GetTelemetrySubscriptions (key 71): a client asks which metrics the broker wants pushed, and how often (KIP-714). */
import { api, field } from '../schema.js';

export const GetTelemetrySubscriptions = api({
  key: 71,
  name: 'GetTelemetrySubscriptions',
  versions: '0',
  flexible: '0+',
  listeners: ['broker'],
  request: [
    field('clientInstanceId', 'uuid', '0+'),
  ],
  response: [
    field('throttleTimeMs', 'int32', '0+'),
    field('errorCode', 'int16', '0+'),
    field('clientInstanceId', 'uuid', '0+'),
    field('subscriptionId', 'int32', '0+'),
    field('acceptedCompressionTypes', '[]int8', '0+'),
    field('pushIntervalMs', 'int32', '0+'),
    field('telemetryMaxBytes', 'int32', '0+'),
    field('deltaTemporality', 'bool', '0+'),
    field('requestedMetrics', '[]string', '0+'),
  ],
});
