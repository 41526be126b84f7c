/**
 * A SASL listener's settings, as Kafka reads them: `sasl.enabled.mechanisms`
 * (listener-prefixed first; Kafka's default is GSSAPI), and for each
 * mechanism its JAAS entry in
 * `listener.name.<listener>.<mechanism>.sasl.jaas.config`. PLAIN takes its
 * users from that entry's `user_<name>="<password>"` options; SCRAM its
 * credentials from the metadata log (UserScramCredentialRecord); OAUTHBEARER
 * validates unsecured JWS tokens with the entry's unsecuredValidator* options
 * (Kafka's default server callback handler).
 *
 * `connections.max.reauth.ms` bounds a session (KIP-368) per mechanism, read
 * as Kafka's SaslChannelBuilder reads it: the listener's
 * `listener.name.<listener>.<mechanism>.connections.max.reauth.ms`, else the
 * listener's or the broker's `connections.max.reauth.ms`; 0 (the default)
 * or less sets no bound.
 *
 * Kafka's broker also reads a JAAS file (java.security.auth.login.config);
 * Spool reads only the property form.
 */
import { ConfigError, type BrokerConfig } from '../../common/config.js';
import { listenerPrefixed, listenerSetting } from '../ssl-config.js';
import { parseJaasConfig, type JaasEntry } from './jaas.js';
import { PLAIN, PlainSaslServer, plainUsers } from './plain.js';
import type { SaslServer } from './mechanism.js';
import { ScramSaslServer, type ScramCredentialSource } from './scram-server.js';
import { SCRAM_MECHANISMS, scramMechanismNamed } from '../scram.js';
import type { Random } from '../../io/random.js';
import type { Clock, Timers } from '../../io/clock.js';
import { OAUTHBEARER, OAuthBearerSaslServer, unsecuredValidator, unsecuredValidatorOptions, type TokenValidator } from './oauthbearer.js';
import { oauthCallbackHandler, SECURED_VALIDATOR, securedValidator } from './oauth-jwks.js';
import type { FileSystem } from '../../io/fs.js';

/** The mechanisms Spool serves, and the JAAS login module each expects. */
const LOGIN_MODULES: Readonly<Record<string, string>> = {
  [PLAIN]: 'org.apache.kafka.common.security.plain.PlainLoginModule',
  ...Object.fromEntries(SCRAM_MECHANISMS.map((m) => [m.name, 'org.apache.kafka.common.security.scram.ScramLoginModule'])),
  [OAUTHBEARER]: 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule',
};

/** What SASL mechanisms read from the node: SCRAM credentials from the metadata image, randomness for nonces, the clock for token times. */
export interface SaslCredentialSources {
  scramCredentials: ScramCredentialSource;
  random: Random;
  clock: Clock;
  /** The node's timers (an http(s) JWKS endpoint's refresh); real timers when absent. */
  timers?: Timers;
  /** Registers what stop() ends (an http(s) JWKS endpoint's refresh timer). */
  onClose?: (close: () => void) => void;
}

export interface SaslListenerSettings {
  enabledMechanisms: string[];
  /** A fresh server for one exchange in `mechanism` (one of enabledMechanisms). */
  newServer(mechanism: string): SaslServer;
  /** connection.failed.authentication.delay.ms: a failed authentication is answered and closed this late. */
  failedAuthenticationDelayMs: number;
  /** sasl.server.max.receive.size: the largest frame read before authentication. */
  receiveBytesMax: number;
  /** connections.max.reauth.ms for a mechanism (0 or less: sessions of that mechanism have no bound but their credential's). */
  connectionsMaxReauthMs(mechanism: string): number;
}

const intSetting = (config: BrokerConfig, listenerName: string, name: string, fallback: number): number => {
  const text = listenerSetting(config, listenerName, name, String(fallback))!;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(`Invalid value ${text} for configuration ${name}: Not a number of type INT`);
  return value;
};

function connectionsMaxReauthMs(config: BrokerConfig, listenerName: string, mechanism: string): number {
  const name = 'connections.max.reauth.ms';
  const text = config.explicit.get(listenerPrefixed(listenerName, `${mechanism.toLowerCase()}.${name}`)) ?? listenerSetting(config, listenerName, name, '0')!;
  const value = Number(text.trim());
  if (!/^[+-]?\d+$/.test(text.trim()) || !Number.isSafeInteger(value)) throw new ConfigError(`Invalid value ${text} for configuration ${name}: Not a number of type LONG`);
  return value;
}

export async function saslListenerSettings(config: BrokerConfig, listener: { name: string }, sources: SaslCredentialSources, fs: FileSystem): Promise<SaslListenerSettings> {
  const mechanisms = (listenerSetting(config, listener.name, 'sasl.enabled.mechanisms', 'GSSAPI') ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (mechanisms.length === 0) throw new ConfigError(`No SASL mechanisms are enabled on listener ${listener.name}: set sasl.enabled.mechanisms`);
  const unserved = mechanisms.filter((m) => !Object.hasOwn(LOGIN_MODULES, m));
  if (unserved.length > 0) {
    throw new ConfigError(`Listener ${listener.name} enables SASL mechanism ${unserved.join(', ')} (sasl.enabled.mechanisms), which Spool does not serve; it serves ${Object.keys(LOGIN_MODULES).join(', ')}`);
  }
  const secured = mechanisms.includes(OAUTHBEARER) ? await oauthSecuredValidator(config, listener.name, fs, sources) : null;
  const servers = new Map(mechanisms.map((mechanism) => [mechanism, serverFactory(mechanism, jaasEntry(config, listener.name, mechanism), sources, secured)]));
  const maxReauthMs = new Map(mechanisms.map((mechanism) => [mechanism, connectionsMaxReauthMs(config, listener.name, mechanism)]));
  return {
    enabledMechanisms: mechanisms,
    newServer: (mechanism) => servers.get(mechanism)!(),
    failedAuthenticationDelayMs: intSetting(config, listener.name, 'connection.failed.authentication.delay.ms', 100),
    receiveBytesMax: intSetting(config, listener.name, 'sasl.server.max.receive.size', 524288),
    connectionsMaxReauthMs: (mechanism) => maxReauthMs.get(mechanism) ?? 0,
  };
}

/**
 * The listener's OAUTHBEARER validation: Kafka's default unsecured one (null),
 * or its OAuthBearerValidatorCallbackHandler with a JWKS. Any other callback
 * handler stops the start rather than being ignored.
 */
async function oauthSecuredValidator(config: BrokerConfig, listenerName: string, fs: FileSystem, sources: SaslCredentialSources): Promise<TokenValidator | null> {
  const handler = oauthCallbackHandler(config, listenerName);
  if (handler === undefined) return null;
  if (handler !== SECURED_VALIDATOR) throw new ConfigError(`sasl.server.callback.handler.class ${handler} on listener ${listenerName}: Spool's OAUTHBEARER serves only ${SECURED_VALIDATOR} and Kafka's default unsecured validation`);
  return securedValidator(config, listenerName, fs, {
    ...(sources.timers === undefined ? {} : { timers: sources.timers }),
    onEndpoint: (jwks) => sources.onClose?.(() => jwks.close()),
  });
}

function jaasEntry(config: BrokerConfig, listenerName: string, mechanism: string): JaasEntry {
  const name = listenerPrefixed(listenerName, `${mechanism.toLowerCase()}.sasl.jaas.config`);
  const text = config.explicit.get(name);
  if (text === undefined) {
    throw new ConfigError(`Could not find a JAAS entry for listener ${listenerName} and mechanism ${mechanism}: set ${name}`);
  }
  let entry: JaasEntry;
  try {
    entry = parseJaasConfig(text);
  } catch (error) {
    throw new ConfigError(`Invalid value for configuration ${name}: ${(error as Error).message}`);
  }
  if (entry.loginModule !== LOGIN_MODULES[mechanism]) throw new ConfigError(`${name} names ${entry.loginModule}; ${mechanism} needs ${LOGIN_MODULES[mechanism]}`);
  return entry;
}

function serverFactory(mechanism: string, jaas: JaasEntry, sources: SaslCredentialSources, secured: TokenValidator | null): () => SaslServer {
  if (mechanism === PLAIN) {
    const users = plainUsers(jaas.options);
    return () => new PlainSaslServer(users);
  }
  if (mechanism === OAUTHBEARER) {
    let validator = secured;
    try {
      validator ??= unsecuredValidator(unsecuredValidatorOptions(jaas.options));
    } catch (error) {
      throw new ConfigError(`Invalid OAUTHBEARER JAAS options: ${(error as Error).message}`);
    }
    return () => new OAuthBearerSaslServer(validator, sources.clock);
  }
  const scram = scramMechanismNamed(mechanism);
  if (scram === undefined) throw new Error(`no SASL server for ${mechanism}`);
  return () => new ScramSaslServer(scram, { credentials: sources.scramCredentials, random: sources.random });
}
