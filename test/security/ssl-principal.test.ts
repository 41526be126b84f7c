/**
 * The principal of a TLS client: its certificate subject in RFC 2253 form
 * (most specific first, as Java's X500Principal prints it), mapped by
 * ssl.principal.mapping.rules with Kafka's rule syntax and semantics (the
 * cases of Kafka's SslPrincipalMapperTest), ANONYMOUS without a certificate,
 * refused when no rule applies or the certificate is not trusted.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { NoMatchingRule, SslPrincipalMapper } from '../../src/security/ssl-principal-mapper.js';
import { distinguishedName, sslAuthentication } from '../../src/security/ssl-principal.js';
import { makeTestPki } from './certificates.js';

const pki = makeTestPki();
after(() => pki.remove());
const aliceDer = new X509Certificate(pki.client.cert).raw;

test('a certificate subject in RFC 2253 order', () => {
  assert.equal(distinguishedName(aliceDer), 'CN=alice,OU=eng,O=Acme,C=US');
});

test('the principal: User:<DN> by default, ANONYMOUS without a certificate or with ssl.client.auth=none, refused when untrusted or unmapped', () => {
  const settings = (rules: string) => ({ clientAuth: 'required' as const, principalMapper: new SslPrincipalMapper(rules) });
  assert.deepEqual(sslAuthentication({ certificate: aliceDer, authorized: true }, settings('DEFAULT')), { principal: 'User:CN=alice,OU=eng,O=Acme,C=US' });
  assert.deepEqual(sslAuthentication({ certificate: aliceDer, authorized: true }, settings('RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/U')), { principal: 'User:ALICE@ENG' });
  assert.deepEqual(sslAuthentication({ certificate: null, authorized: false }, settings('DEFAULT')), { principal: 'User:ANONYMOUS' });
  assert.deepEqual(sslAuthentication({ certificate: aliceDer, authorized: true }, { ...settings('DEFAULT'), clientAuth: 'none' }), { principal: 'User:ANONYMOUS' });
  assert.ok('refused' in sslAuthentication({ certificate: aliceDer, authorized: false }, settings('DEFAULT')));
  assert.match((sslAuthentication({ certificate: aliceDer, authorized: true }, settings('RULE:^CN=bob.*$/bob/')) as { refused: string }).refused, /^No rules apply to CN=alice/);
});

test('valid and invalid rules, as Kafka parses them', () => {
  for (const rules of [
    'DEFAULT',
    'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/',
    'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT',
    'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/',
    'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L',
    'RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U',
    'RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/',
    'RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/',
    ',,RULE://,,,DEFAULT,,',
  ]) {
    assert.doesNotThrow(() => new SslPrincipalMapper(rules), rules);
  }
  for (const rules of [
    'default',
    'DEFAUL',
    'DEFAULT/L',
    'DEFAULT/U',
    'RULE:CN=(.*?),OU=ServiceUsers.*/$1',
    'rule:^CN=(.*?),OU=ServiceUsers.*$/$1/',
    'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U',
    'RULE:^CN=(.*?),OU=ServiceUsers.*$/L',
    'RULE:^CN=(.*?),OU=ServiceUsers.*$/U',
    'RULE:^CN=(.*?),OU=ServiceUsers.*$/LU',
  ]) {
    assert.throws(() => new SslPrincipalMapper(rules), /Invalid rule/, rules);
  }
});

test('the first rule that applies names the principal', () => {
  const mapper = new SslPrincipalMapper(
    [
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L',
      'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L',
      'RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U',
      'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U',
      'DEFAULT',
    ].join(', '),
  );
  assert.equal(mapper.nameOf('CN=Duke,OU=ServiceUsers,O=Org,C=US'), 'duke');
  assert.equal(mapper.nameOf('CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US'), 'duke@sme');
  assert.equal(mapper.nameOf('cn=duke,ou=sme,dc=mycp,dc=com'), 'DUKE@SME');
  assert.equal(mapper.nameOf('cN=duke,OU=JavaSoft,O=Sun Microsystems'), 'DUKE');
  assert.equal(mapper.nameOf('OU=JavaSoft,O=Sun Microsystems,C=US'), 'OU=JavaSoft,O=Sun Microsystems,C=US');
  assert.equal(new SslPrincipalMapper(String.raw`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`).nameOf(String.raw`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`), String.raw`Tkac\, Adam`);
  assert.throws(() => new SslPrincipalMapper('RULE:^CN=x$/y/').nameOf('CN=z'), NoMatchingRule);
});
