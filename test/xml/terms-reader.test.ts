import { describe, expect, it } from 'vitest';
import { offerXml, read } from './fixtures.js';

/** A second job description term after the first: its jsdl:Resources and sla:ServiceLevel hold `resources` and `level`. */
function withSecondTerm(xml: string, resources: string, level: string): string {
  const second =
    '<wsag:ServiceDescriptionTerm wsag:Name="Second" wsag:ServiceName="ComputeJob"><jsdl:JobDefinition><jsdl:JobDescription>' +
    `<jsdl:Resources>${resources}</jsdl:Resources><sla:ServiceLevel>${level}</sla:ServiceLevel>` +
    '</jsdl:JobDescription></jsdl:JobDefinition></wsag:ServiceDescriptionTerm>';
  const at = xml.indexOf('<wsag:GuaranteeTerm');
  return xml.slice(0, at) + second + xml.slice(at);
}

describe('readServiceRequest over several job description terms', () => {
  it('takes each term from the first place it is written, in document order, wherever that is', () => {
    const request = read(
      withSecondTerm(
        offerXml('deadline-job'),
        '<jsdl:TotalResourceCount><jsdl:Exact>9</jsdl:Exact></jsdl:TotalResourceCount><sla:Storage><sla:SizeGB>20</sla:SizeGB></sla:Storage>',
        '<sla:RuntimeEstimate>60</sla:RuntimeEstimate><sla:CheckpointFrequency>2</sla:CheckpointFrequency>',
      ),
    ).request;
    // Written in the first term: the first term's values.
    expect(request.nodeCount).toBe(4);
    expect(request.runtimeSeconds).toBe(3600);
    expect(request.interconnect).toBe('InfiniBand');
    // Written only in the second: read from there, not dropped.
    expect(request.storageGB).toBe(20);
    expect(request.checkpointFrequency).toBe(2);
  });

  it('a range written before an exact count elsewhere: the first Exact wins, then the first lower bound', () => {
    const xml = offerXml('deadline-job').replace(
      '<jsdl:TotalResourceCount><jsdl:Exact>4</jsdl:Exact></jsdl:TotalResourceCount>',
      '<jsdl:TotalResourceCount><jsdl:LowerBoundedRange>6</jsdl:LowerBoundedRange></jsdl:TotalResourceCount>',
    );
    expect(read(xml).request.nodeCount).toBe(6);
    expect(
      read(withSecondTerm(xml, '<jsdl:TotalResourceCount><jsdl:Exact>8</jsdl:Exact></jsdl:TotalResourceCount>', ''))
        .request.nodeCount,
    ).toBe(8);
  });
});
