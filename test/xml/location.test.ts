import { describe, expect, it } from 'vitest';
import { compileLocation } from '../../src/xml/location.js';

describe('creation-constraint Locations', () => {
  it('plain XPath keeps the in-scope prefixes', () => {
    const l = compileLocation('/wsag:AgreementOffer/wsag:Terms', { wsag: 'urn:wsag' });
    expect(l).toEqual({ xpath: '/wsag:AgreementOffer/wsag:Terms', namespaces: { wsag: 'urn:wsag' } });
  });

  it('the declare-namespace prologue adds prefixes and $this names the offer document', () => {
    const l = compileLocation(
      'declare namespace jsdl=\'urn:jsdl\';declare namespace wsag="urn:wsag";$this/wsag:AgreementOffer/jsdl:Exact',
      { other: 'urn:other' },
    );
    expect(l.xpath).toBe('/wsag:AgreementOffer/jsdl:Exact');
    expect(l.namespaces).toEqual({ jsdl: 'urn:jsdl', wsag: 'urn:wsag' });
  });

  it('keeps only the prefixes the expression names (each is registered again at every evaluation)', () => {
    const inScope = {
      wsag: 'urn:wsag',
      sla: 'urn:sla',
      jsdl: 'urn:jsdl',
      'jsdl-posix': 'urn:posix',
      child: 'urn:child',
      '': 'urn:default',
    };
    const l = compileLocation("/child::wsag:Terms/jsdl-posix:Argument[@sla:Unit = 'sla:x']", inScope);
    expect(l.namespaces).toEqual({ wsag: 'urn:wsag', sla: 'urn:sla', 'jsdl-posix': 'urn:posix' });
  });

  it('a bare $this is the document; $this inside a predicate too', () => {
    expect(compileLocation('$this', {}).xpath).toBe('/');
    expect(compileLocation('count($this//a:b) > 1', {}).xpath).toBe('count(//a:b) > 1');
  });

  it('a declared prefix overrides an in-scope one of the same name', () => {
    expect(compileLocation("declare namespace p='urn:new'; /p:x", { p: 'urn:old' }).namespaces.p).toBe('urn:new');
  });
});
