/**
 * Documents in the sla: term language, built from small templates: a JSDL JobDefinition with
 * sla:ServiceLevel and sla: resource extensions, and an AgreementOffer whose guarantee term
 * carries sla: content inside wsag elements of type xs:anyType.
 */
import { NS } from './helpers.js';

export interface SlaCase {
  name: string;
  xml: string;
  /** local name of the sla: element the (first) error must name; undefined for valid documents */
  rejects?: string;
}

export const GOOD_SERVICE_LEVEL: Record<string, string> = {
  RuntimeEstimate: '<sla:RuntimeEstimate>7200</sla:RuntimeEstimate>',
  EarliestStart: '<sla:EarliestStart>2026-12-01T08:00:00Z</sla:EarliestStart>',
  Deadline: '<sla:Deadline>2026-12-01T20:00:00+01:00</sla:Deadline>',
  RequestKind: '<sla:RequestKind>Preparatory</sla:RequestKind>',
  GuaranteeLevel: '<sla:GuaranteeLevel>Enhanced</sla:GuaranteeLevel>',
  CheckpointFrequency: '<sla:CheckpointFrequency>0.5</sla:CheckpointFrequency>',
  MaxCoveredOutages: '<sla:MaxCoveredOutages>2</sla:MaxCoveredOutages>',
  MigrationPolicy:
    '<sla:MigrationPolicy Scope="Grid"><sla:Include>https://a.example.org</sla:Include>' +
    '<sla:Include>https://b.example.org</sla:Include><sla:Exclude>https://c.example.org</sla:Exclude></sla:MigrationPolicy>',
  SecurityPolicy:
    '<sla:SecurityPolicy><sla:Requirement>IsolatedPartition</sla:Requirement><sla:Requirement>Sandbox</sla:Requirement></sla:SecurityPolicy>',
  ChargeAccount:
    '<sla:ChargeAccount><sla:Account>ACC-1</sla:Account><sla:VirtualOrganisation>astro</sla:VirtualOrganisation>' +
    '<sla:Group>pulsars</sla:Group></sla:ChargeAccount>',
  UseReservation: '<sla:UseReservation>ar-2026-0042</sla:UseReservation>',
};

export const GOOD_RESOURCE_EXTENSIONS =
  '<sla:Interconnect>Omni-Path</sla:Interconnect>' +
  '<sla:Library Name="openmpi" Version="4.1.6"/>' +
  '<sla:Library Name="hdf5" Version="1.14" Loaded="true"/>' +
  '<sla:Storage><sla:SizeGB>0.5</sla:SizeGB></sla:Storage>';

/** A JSDL JobDefinition; `overrides` replaces (or, with '', removes) ServiceLevel children. */
export function jobDefinition(
  overrides: Record<string, string> = {},
  resources = GOOD_RESOURCE_EXTENSIONS,
  serviceLevel?: string,
): string {
  const children = Object.entries({ ...GOOD_SERVICE_LEVEL, ...overrides })
    .map(([, xml]) => xml)
    .join('\n        ');
  return `<?xml version="1.0" encoding="UTF-8"?>
<jsdl:JobDefinition xmlns:jsdl="${NS.jsdl}" xmlns:sla="${NS.sla}">
  <jsdl:JobDescription>
    <jsdl:Resources>
      <jsdl:TotalResourceCount><jsdl:Exact>4</jsdl:Exact></jsdl:TotalResourceCount>
      ${resources}
    </jsdl:Resources>
    ${serviceLevel ?? `<sla:ServiceLevel>\n        ${children}\n    </sla:ServiceLevel>`}
  </jsdl:JobDescription>
</jsdl:JobDefinition>
`;
}

export interface GuaranteeParts {
  qualifying?: string;
  /** content of KPITarget/CustomServiceLevel */
  kpi?: string;
  /** content of ServiceLevelObjective/CustomServiceLevel (instead of a KPITarget) */
  customSlo?: string;
  valueExpression?: string;
}

/** An AgreementOffer with one guarantee term made of the given parts. */
export function offerWithGuarantee(parts: GuaranteeParts = {}): string {
  const qualifying = parts.qualifying ?? '<sla:SubmittedBefore>PT12H</sla:SubmittedBefore>';
  const slo =
    parts.customSlo !== undefined
      ? `<wsag:CustomServiceLevel>${parts.customSlo}</wsag:CustomServiceLevel>`
      : `<wsag:KPITarget><wsag:KPIName>Completion</wsag:KPIName>` +
        `<wsag:CustomServiceLevel>${parts.kpi ?? '<sla:CompletedBy>2026-12-01T20:00:00Z</sla:CompletedBy>'}</wsag:CustomServiceLevel></wsag:KPITarget>`;
  const value = parts.valueExpression ?? '<sla:Amount>50</sla:Amount><sla:Cap>1000</sla:Cap>';
  return `<?xml version="1.0" encoding="UTF-8"?>
<wsag:AgreementOffer xmlns:wsag="${NS.wsag}" xmlns:sla="${NS.sla}">
  <wsag:Context><wsag:ServiceProvider>AgreementResponder</wsag:ServiceProvider></wsag:Context>
  <wsag:Terms>
    <wsag:All>
      <wsag:GuaranteeTerm wsag:Name="DEADLINE" wsag:Obligated="ServiceProvider">
        <wsag:QualifyingCondition>${qualifying}</wsag:QualifyingCondition>
        <wsag:ServiceLevelObjective>${slo}</wsag:ServiceLevelObjective>
        <wsag:BusinessValueList>
          <wsag:Penalty>
            <wsag:AssessmentInterval><wsag:TimeInterval>PT30M</wsag:TimeInterval></wsag:AssessmentInterval>
            <wsag:ValueUnit>EUR</wsag:ValueUnit>
            <wsag:ValueExpression>${value}</wsag:ValueExpression>
          </wsag:Penalty>
        </wsag:BusinessValueList>
      </wsag:GuaranteeTerm>
    </wsag:All>
  </wsag:Terms>
</wsag:AgreementOffer>
`;
}

export const VALID_SLA_CASES: SlaCase[] = [
  { name: 'JobDefinition with every sla:ServiceLevel child and the sla: resource extensions', xml: jobDefinition() },
  { name: 'JobDefinition with an empty sla:ServiceLevel', xml: jobDefinition({}, '', '<sla:ServiceLevel/>') },
  {
    name: 'boundary values (RuntimeEstimate 31622400, CheckpointFrequency 3600, MaxCoveredOutages 0)',
    xml: jobDefinition({
      RuntimeEstimate: '<sla:RuntimeEstimate>31622400</sla:RuntimeEstimate>',
      CheckpointFrequency: '<sla:CheckpointFrequency>3600</sla:CheckpointFrequency>',
      MaxCoveredOutages: '<sla:MaxCoveredOutages>0</sla:MaxCoveredOutages>',
      MigrationPolicy: '<sla:MigrationPolicy Scope="None"/>',
      ChargeAccount: '<sla:ChargeAccount><sla:Account>a</sla:Account></sla:ChargeAccount>',
    }),
  },
  { name: 'AgreementOffer with sla: qualifying condition, KPI target and value expression', xml: offerWithGuarantee() },
  {
    name: 'AgreementOffer with sla:NodesAvailable and sla:MaxCheckpointInterval as custom service level, zero amounts',
    xml: offerWithGuarantee({
      customSlo:
        '<sla:NodesAvailable>16</sla:NodesAvailable><sla:MaxCheckpointInterval>PT30M</sla:MaxCheckpointInterval>',
      valueExpression: '<sla:Amount>0</sla:Amount><sla:Cap>0.00</sla:Cap>',
    }),
  },
  {
    name: 'AgreementOffer with sla:StartBy as KPI target',
    xml: offerWithGuarantee({ kpi: '<sla:StartBy>2026-12-01T10:00:00Z</sla:StartBy>' }),
  },
];

export const INVALID_SLA_CASES: SlaCase[] = [
  // the six named in the brief
  {
    name: 'GuaranteeLevel "Platinum"',
    rejects: 'GuaranteeLevel',
    xml: jobDefinition({ GuaranteeLevel: '<sla:GuaranteeLevel>Platinum</sla:GuaranteeLevel>' }),
  },
  {
    name: 'RuntimeEstimate 0',
    rejects: 'RuntimeEstimate',
    xml: jobDefinition({ RuntimeEstimate: '<sla:RuntimeEstimate>0</sla:RuntimeEstimate>' }),
  },
  {
    name: 'CheckpointFrequency -1',
    rejects: 'CheckpointFrequency',
    xml: jobDefinition({ CheckpointFrequency: '<sla:CheckpointFrequency>-1</sla:CheckpointFrequency>' }),
  },
  {
    name: 'Deadline "tomorrow"',
    rejects: 'Deadline',
    xml: jobDefinition({ Deadline: '<sla:Deadline>tomorrow</sla:Deadline>' }),
  },
  {
    name: 'sla:Amount "-5" inside wsag:ValueExpression of a GuaranteeTerm',
    rejects: 'Amount',
    xml: offerWithGuarantee({ valueExpression: '<sla:Amount>-5</sla:Amount>' }),
  },
  {
    name: 'sla:CompletedBy "soon" inside KPITarget/CustomServiceLevel',
    rejects: 'CompletedBy',
    xml: offerWithGuarantee({ kpi: '<sla:CompletedBy>soon</sla:CompletedBy>' }),
  },
  // ranges and enumerations
  {
    name: 'RuntimeEstimate 31622401 (over 366 days)',
    rejects: 'RuntimeEstimate',
    xml: jobDefinition({ RuntimeEstimate: '<sla:RuntimeEstimate>31622401</sla:RuntimeEstimate>' }),
  },
  {
    name: 'RuntimeEstimate 1.5 (not an integer)',
    rejects: 'RuntimeEstimate',
    xml: jobDefinition({ RuntimeEstimate: '<sla:RuntimeEstimate>1.5</sla:RuntimeEstimate>' }),
  },
  {
    name: 'UseReservation empty (needs an agreement id)',
    rejects: 'UseReservation',
    xml: jobDefinition({ UseReservation: '<sla:UseReservation> </sla:UseReservation>' }),
  },
  {
    name: 'UseReservation before ChargeAccount (it ends the sequence: the ChargeAccount after it is not expected)',
    rejects: 'ChargeAccount',
    xml: jobDefinition({
      ChargeAccount: '<sla:UseReservation>ar-1</sla:UseReservation>',
      UseReservation: '<sla:ChargeAccount><sla:Account>a</sla:Account></sla:ChargeAccount>',
    }),
  },
  {
    name: 'CheckpointFrequency 0 (minExclusive)',
    rejects: 'CheckpointFrequency',
    xml: jobDefinition({ CheckpointFrequency: '<sla:CheckpointFrequency>0</sla:CheckpointFrequency>' }),
  },
  {
    name: 'CheckpointFrequency 3600.5',
    rejects: 'CheckpointFrequency',
    xml: jobDefinition({ CheckpointFrequency: '<sla:CheckpointFrequency>3600.5</sla:CheckpointFrequency>' }),
  },
  {
    name: 'MaxCoveredOutages 65',
    rejects: 'MaxCoveredOutages',
    xml: jobDefinition({ MaxCoveredOutages: '<sla:MaxCoveredOutages>65</sla:MaxCoveredOutages>' }),
  },
  {
    name: 'RequestKind "binding" (enumerations are case-sensitive)',
    rejects: 'RequestKind',
    xml: jobDefinition({ RequestKind: '<sla:RequestKind>binding</sla:RequestKind>' }),
  },
  {
    name: 'EarliestStart without time ("2026-12-01")',
    rejects: 'EarliestStart',
    xml: jobDefinition({ EarliestStart: '<sla:EarliestStart>2026-12-01</sla:EarliestStart>' }),
  },
  // structure
  {
    name: 'ServiceLevel children out of order (Deadline before EarliestStart)',
    rejects: 'EarliestStart',
    xml: jobDefinition({
      EarliestStart: '',
      Deadline:
        '<sla:Deadline>2026-12-01T20:00:00Z</sla:Deadline><sla:EarliestStart>2026-12-01T08:00:00Z</sla:EarliestStart>',
    }),
  },
  {
    name: 'unknown child sla:Priority in ServiceLevel',
    rejects: 'Priority',
    xml: jobDefinition({ ChargeAccount: '<sla:Priority>high</sla:Priority>' }),
  },
  {
    name: 'MigrationPolicy without Scope',
    rejects: 'MigrationPolicy',
    xml: jobDefinition({ MigrationPolicy: '<sla:MigrationPolicy/>' }),
  },
  {
    name: 'MigrationPolicy Scope "Planet"',
    rejects: 'MigrationPolicy',
    xml: jobDefinition({ MigrationPolicy: '<sla:MigrationPolicy Scope="Planet"/>' }),
  },
  {
    name: 'MigrationPolicy Exclude before Include',
    rejects: 'Include',
    xml: jobDefinition({
      MigrationPolicy:
        '<sla:MigrationPolicy Scope="Grid"><sla:Exclude>urn:a</sla:Exclude><sla:Include>urn:b</sla:Include></sla:MigrationPolicy>',
    }),
  },
  {
    name: 'SecurityPolicy without Requirement',
    rejects: 'SecurityPolicy',
    xml: jobDefinition({ SecurityPolicy: '<sla:SecurityPolicy/>' }),
  },
  {
    name: 'SecurityPolicy Requirement "Encrypted"',
    rejects: 'Requirement',
    xml: jobDefinition({
      SecurityPolicy: '<sla:SecurityPolicy><sla:Requirement>Encrypted</sla:Requirement></sla:SecurityPolicy>',
    }),
  },
  {
    name: 'ChargeAccount with a blank Account',
    rejects: 'Account',
    xml: jobDefinition({ ChargeAccount: '<sla:ChargeAccount><sla:Account>  </sla:Account></sla:ChargeAccount>' }),
  },
  {
    name: 'empty ChargeAccount (Account is required)',
    rejects: 'ChargeAccount',
    xml: jobDefinition({ ChargeAccount: '<sla:ChargeAccount/>' }),
  },
  {
    name: 'ChargeAccount with Group but no Account',
    rejects: 'Group',
    xml: jobDefinition({ ChargeAccount: '<sla:ChargeAccount><sla:Group>g</sla:Group></sla:ChargeAccount>' }),
  },
  // resource extensions
  { name: 'Library without Version', rejects: 'Library', xml: jobDefinition({}, '<sla:Library Name="openmpi"/>') },
  {
    name: 'Library Loaded="maybe"',
    rejects: 'Library',
    xml: jobDefinition({}, '<sla:Library Name="openmpi" Version="4" Loaded="maybe"/>'),
  },
  {
    name: 'Library with a prefixed (qualified) Name attribute',
    rejects: 'Library',
    xml: jobDefinition({}, '<sla:Library sla:Name="openmpi" Version="4"/>'),
  },
  {
    name: 'Library with content',
    rejects: 'Library',
    xml: jobDefinition({}, '<sla:Library Name="openmpi" Version="4">text</sla:Library>'),
  },
  {
    name: 'Storage SizeGB 0',
    rejects: 'SizeGB',
    xml: jobDefinition({}, '<sla:Storage><sla:SizeGB>0</sla:SizeGB></sla:Storage>'),
  },
  { name: 'empty Storage (SizeGB is required)', rejects: 'Storage', xml: jobDefinition({}, '<sla:Storage/>') },
  {
    name: 'Storage Redundancy "RAID5"',
    rejects: 'Redundancy',
    xml: jobDefinition(
      {},
      '<sla:Storage><sla:SizeGB>1</sla:SizeGB><sla:Redundancy>RAID5</sla:Redundancy></sla:Storage>',
    ),
  },
  // guarantee-term content
  {
    name: 'sla:Cap -0.01',
    rejects: 'Cap',
    xml: offerWithGuarantee({ valueExpression: '<sla:Amount>5</sla:Amount><sla:Cap>-0.01</sla:Cap>' }),
  },
  {
    name: 'sla:Amount "fifty"',
    rejects: 'Amount',
    xml: offerWithGuarantee({ valueExpression: '<sla:Amount>fifty</sla:Amount>' }),
  },
  {
    name: 'sla:NodesAvailable 0 as custom service level',
    rejects: 'NodesAvailable',
    xml: offerWithGuarantee({ customSlo: '<sla:NodesAvailable>0</sla:NodesAvailable>' }),
  },
  {
    name: 'sla:SubmittedBefore "12 hours" in QualifyingCondition',
    rejects: 'SubmittedBefore',
    xml: offerWithGuarantee({ qualifying: '<sla:SubmittedBefore>12 hours</sla:SubmittedBefore>' }),
  },
  {
    name: 'sla:MaxCheckpointInterval "30m"',
    rejects: 'MaxCheckpointInterval',
    xml: offerWithGuarantee({ customSlo: '<sla:MaxCheckpointInterval>30m</sla:MaxCheckpointInterval>' }),
  },
  {
    name: 'sla:StartBy with month 13',
    rejects: 'StartBy',
    xml: offerWithGuarantee({ kpi: '<sla:StartBy>2026-13-01T10:00:00Z</sla:StartBy>' }),
  },
  {
    name: 'sla:Amount "-5" nested in an undeclared element inside ValueExpression (lax reaches it)',
    rejects: 'Amount',
    xml: offerWithGuarantee({
      valueExpression:
        '<x:Formula xmlns:x="urn:unknown"><x:PerInterval><sla:Amount>-5</sla:Amount></x:PerInterval></x:Formula>',
    }),
  },
];
