/**
 * ApiVersions (key 18): the version ranges a node serves. v3 flexible, client software name (KIP-511), features
 * (KIP-584); v4 lets a feature's MinVersion be 0; v5 ClusterId / NodeId check (KIP-1242).
 */
import { api, array, field } from '../schema.js';

export const ApiVersions = api({
  key: 18,
  name: 'ApiVersions',
  versions: '0-5',
  flexible: '3+',
  listeners: ['broker', 'controller'],
  request: [
    field('clientSoftwareName', 'string', '3+'),
    field('clientSoftwareVersion', 'string', '3+'),
    field('clusterId', 'string', '5+', { nullable: '5+', default: null }),
    field('nodeId', 'int32', '5+', { default: -1 }),
  ],
  response: [
    field('errorCode', 'int16', '0+'),
    array('apiKeys', '0+', [
      field('apiKey', 'int16', '0+'),
      field('minVersion', 'int16', '0+'),
      field('maxVersion', 'int16', '0+'),
    ]),
    field('throttleTimeMs', 'int32', '1+'),
    array('supportedFeatures', '3+', [
      field('name', 'string', '3+'),
      field('minVersion', 'int16', '3+'),
      field('maxVersion', 'int16', '3+'),
    ], { tag: 0 }),
    field('finalizedFeaturesEpoch', 'int64', '3+', { default: -1, tag: 1 }),
    array('finalizedFeatures', '3+', [
      field('name', 'string', '3+'),
      field('maxVersionLevel', 'int16', '3+'),
      field('minVersionLevel', 'int16', '3+'),
    ], { tag: 2 }),
    field('zkMigrationReady', 'bool', '3+', { tag: 3 }),
  ],
});
