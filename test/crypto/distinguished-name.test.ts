import { describe, expect, it } from 'vitest';
import { AttributeTypeAndValue, AttributeValue, Name, RelativeDistinguishedName } from '@peculiar/asn1-x509';
import { createCa } from '../../src/crypto/certificate-authority.js';
import { gridDn, nameDer, nameFromParts, sameName } from '../../src/crypto/distinguished-name.js';
import { opensslX509 } from './support/openssl.js';

/** What OpenSSL prints as the subject in its oneline ("compat") form, without the "subject=" label. */
function opensslOneline(name: Name): Promise<string> {
  return createCa({ subject: name, keyType: 'ec', days: 1, now: new Date() }).then(({ certificate }) =>
    opensslX509(certificate, ['-subject', '-nameopt', 'compat'])
      .trim()
      .replace(/^subject=/, ''),
  );
}

describe('gridDn: the OpenSSL oneline form of a name', () => {
  it('a typical Grid DN, as OpenSSL prints it', async () => {
    const name = nameFromParts([
      ['DC', 'org'],
      ['DC', 'example'],
      ['C', 'DE'],
      ['O', 'Grid'],
      ['OU', 'Users'],
      ['CN', 'Alice Example'],
      ['emailAddress', 'alice@example.org'],
    ]);
    expect(gridDn(name)).toBe(
      '/DC=org/DC=example/C=DE/O=Grid/OU=Users/CN=Alice Example/emailAddress=alice@example.org',
    );
    expect(gridDn(name)).toBe(await opensslOneline(name));
  });

  it('escapes / and + in values, and bytes outside printable ASCII, like OpenSSL 3', async () => {
    const name = nameFromParts([
      ['O', 'a/b+c'],
      ['CN', 'Jörg Müller'],
    ]);
    expect(gridDn(name)).toBe('/O=a\\/b\\+c/CN=J\\xC3\\xB6rg M\\xC3\\xBCller');
    expect(gridDn(name)).toBe(await opensslOneline(name));
  });

  it('joins the values of a multi-valued RDN with +', async () => {
    const multi = new RelativeDistinguishedName([
      new AttributeTypeAndValue({ type: '2.5.4.10', value: new AttributeValue({ printableString: 'Grid' }) }),
      new AttributeTypeAndValue({ type: '2.5.4.11', value: new AttributeValue({ printableString: 'Users' }) }),
    ]);
    const name = new Name([...nameFromParts([['C', 'DE']]), multi, ...nameFromParts([['CN', 'bob']])]);
    expect(gridDn(name)).toBe('/C=DE/O=Grid+OU=Users/CN=bob');
    expect(gridDn(name)).toBe(await opensslOneline(name));
  });

  it('an attribute type without a short name prints as its OID', () => {
    expect(
      gridDn(
        nameFromParts([
          ['1.2.3.4', 'x'],
          ['CN', 'y'],
        ]),
      ),
    ).toBe('/1.2.3.4=x/CN=y');
  });

  it('nameFromParts refuses unknown types and empty values; sameName compares encodings', () => {
    expect(() => nameFromParts([['XX', 'a']])).toThrow('unknown attribute type "XX"');
    expect(() => nameFromParts([['CN', '']])).toThrow('empty value for CN');
    expect(sameName(nameFromParts([['CN', 'a']]), nameFromParts([['CN', 'a']]))).toBe(true);
    expect(sameName(nameFromParts([['CN', 'a']]), nameFromParts([['CN', 'b']]))).toBe(false);
    // C must be a PrintableString (tag 0x13); a non-ASCII CN a UTF8String (tag 0x0c).
    expect(nameDer(nameFromParts([['C', 'DE']])).includes(Buffer.from([0x13, 0x02, 0x44, 0x45]))).toBe(true);
    expect(nameDer(nameFromParts([['CN', 'é']])).includes(Buffer.from([0x0c, 0x02, 0xc3, 0xa9]))).toBe(true);
  });
});
