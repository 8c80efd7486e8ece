import type { XmlElement } from 'libxml2-wasm';
import { dropUndefined } from '../domain/drop-undefined.js';
import { InvalidTerms, UnsupportedTerm } from '../domain/errors.js';
import type {
  Compensation,
  GuaranteeLevel,
  GuaranteeTerm,
  KpiTarget,
  Library,
  RequestKind,
  SecurityRequirement,
  ServiceRequest,
} from '../domain/terms.js';
import { readApplication } from './application-reader.js';
import { date } from './datetime.js';
import { limits, number, type NumberRule } from './typed-values.js';
import { isoTime } from '../domain/time.js';
import { ns, prefixes } from './namespaces.js';
import { all, evaluate, one, text } from './xpath.js';

/** The SLA term language (docs/terms.md) read from an offer's wsag:Terms into the domain. */

export function readServiceRequest(terms: XmlElement): ServiceRequest {
  const sdt = './/wsag:ServiceDescriptionTerm';
  refuseUnreadElements(terms, sdt);
  // The children of every jsdl:Resources and sla:ServiceLevel, each set found by one query
  // (rather than one descendant search per term): the first of a name is the term's value.
  const resources = new ChildrenByName(all(terms, `${sdt}//jsdl:Resources/*`));
  const level = new ChildrenByName(all(terms, `${sdt}//sla:ServiceLevel/*`));
  const levelText = (name: string) => level.text(ns.sla, name);
  const request: ServiceRequest = {
    nodeCount: rangeValue(resources.all(ns.jsdl, 'TotalResourceCount'), 'jsdl:TotalResourceCount', limits.nodes) ?? 1,
    cpusPerNode: rangeValue(
      resources.all(ns.jsdl, 'IndividualCPUCount'),
      'jsdl:IndividualCPUCount',
      limits.cpusPerNode,
    ),
    memoryPerNodeMiB: mib(
      rangeValue(
        resources.all(ns.jsdl, 'IndividualPhysicalMemory'),
        'jsdl:IndividualPhysicalMemory',
        limits.memoryBytes,
      ),
    ),
    interconnect: resources.text(ns.sla, 'Interconnect'),
    operatingSystem: firstText(
      resources.all(ns.jsdl, 'OperatingSystem'),
      'jsdl:OperatingSystemType/jsdl:OperatingSystemName',
    ),
    architecture: firstText(resources.all(ns.jsdl, 'CPUArchitecture'), 'jsdl:CPUArchitectureName'),
    candidateHosts: optionalList(
      resources
        .all(ns.jsdl, 'CandidateHosts')
        .flatMap((c) => all(c, 'jsdl:HostName'))
        .map((h) => h.content.trim()),
    ),
    libraries: resources.all(ns.sla, 'Library').map(readLibrary),
    storageGB: number(firstText(resources.all(ns.sla, 'Storage'), 'sla:SizeGB'), 'sla:SizeGB', limits.storageGB),
    runtimeSeconds: number(levelText('RuntimeEstimate'), 'sla:RuntimeEstimate', limits.seconds),
    earliestStart: date(levelText('EarliestStart'), 'sla:EarliestStart'),
    deadline: date(levelText('Deadline'), 'sla:Deadline'),
    window: readWindow(terms),
    requestKind: (levelText('RequestKind') as RequestKind | undefined) ?? 'Binding',
    guaranteeLevel: (levelText('GuaranteeLevel') as GuaranteeLevel | undefined) ?? 'Legacy',
    checkpointFrequency: number(levelText('CheckpointFrequency'), 'sla:CheckpointFrequency', limits.checkpointsPerHour),
    maxCoveredOutages: number(levelText('MaxCoveredOutages'), 'sla:MaxCoveredOutages', limits.outages) ?? 0,
    securityPolicy: level
      .all(ns.sla, 'SecurityPolicy')
      .flatMap((p) => all(p, 'sla:Requirement'))
      .map((r) => r.content.trim() as SecurityRequirement),
    useReservation: levelText('UseReservation'),
    interactive: boolean(levelText('Interactive'), 'sla:Interactive'),
    bid: number(levelText('Bid'), 'sla:Bid', limits.bid),
    resumesFromCheckpointBytes: number(
      levelText('ResumesFromCheckpoint'),
      'sla:ResumesFromCheckpoint',
      limits.checkpointBytes,
    ),
    application: readApplication(terms, sdt),
  };
  const migration = level.first(ns.sla, 'MigrationPolicy');
  if (migration) {
    request.migrationPolicy = {
      scope: (attr(migration, 'Scope') ?? 'None') as 'None',
      include: all(migration, 'sla:Include').map((e) => e.content.trim()),
      exclude: all(migration, 'sla:Exclude').map((e) => e.content.trim()),
    };
  }
  const account = level.first(ns.sla, 'ChargeAccount');
  if (account) {
    request.chargeAccount = {
      account: text(account, 'sla:Account') ?? '',
      virtualOrganisation: text(account, 'sla:VirtualOrganisation'),
      group: text(account, 'sla:Group'),
    };
  }
  if (request.deadline && request.earliestStart && request.deadline.getTime() <= request.earliestStart.getTime()) {
    throw new InvalidTerms(
      `sla:Deadline ${isoTime(request.deadline)} is not after sla:EarliestStart ${isoTime(request.earliestStart)}`,
    );
  }
  if (request.interactive) checkInteractive(request);
  if (request.deadline && request.runtimeSeconds === undefined) {
    throw new InvalidTerms(
      'sla:Deadline needs sla:RuntimeEstimate: a deadline cannot be promised for a job of unknown length',
    );
  }
  return dropUndefined(request);
}

/** xs:boolean: true, false, 1 or 0. */
function boolean(value: string | undefined, element: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new InvalidTerms(`${element} must be true or false, got "${value}"`);
}

/** An interactive job starts at once (within the site's bound) and runs for its estimate: no time terms of its own. */
function checkInteractive(request: ServiceRequest): void {
  const why = 'sla:Interactive starts the job within seconds of acceptance or not at all';
  if (request.window) throw new InvalidTerms(`${why}: leave out the reservation window (arp:AllocationTimeConstraint)`);
  if (request.deadline || request.earliestStart)
    throw new InvalidTerms(`${why}: leave out sla:Deadline and sla:EarliestStart`);
  if (request.runtimeSeconds === undefined)
    throw new InvalidTerms(`${why}: it needs sla:RuntimeEstimate, how long it holds its nodes`);
  if (request.guaranteeLevel === 'Background')
    throw new InvalidTerms(`${why}: a Background job runs in the gaps of the schedule, so it cannot be interactive`);
  if (request.useReservation !== undefined)
    throw new InvalidTerms(`${why}: it cannot use a reservation (sla:UseReservation); leave one of the two out`);
}

/** What a job description may hold: each is read above and acted on (docs/terms.md, "Where each term is enforced"). */
const readInJobDescription = ['jsdl:JobIdentification', 'jsdl:Application', 'jsdl:Resources', 'sla:ServiceLevel'];
const readInResources = [
  'jsdl:CandidateHosts',
  'jsdl:OperatingSystem',
  'jsdl:CPUArchitecture',
  'jsdl:IndividualCPUCount',
  'jsdl:IndividualPhysicalMemory',
  'jsdl:TotalResourceCount',
  'sla:Interconnect',
  'sla:Library',
  'sla:Storage',
];

/** No silent terms: a JSDL element the server would not act on is refused by name, never dropped. */
function refuseUnreadElements(terms: XmlElement, sdt: string): void {
  const check = (path: string, known: readonly string[], where: string) => {
    for (const e of all(terms, path)) {
      const prefix =
        e.namespaceUri === prefixes.sla
          ? 'sla'
          : e.namespaceUri === prefixes.jsdl
            ? 'jsdl'
            : e.prefix || `{${e.namespaceUri}}`;
      const name = `${prefix}:${e.name}`;
      if (!known.includes(name)) {
        throw new UnsupportedTerm(
          `${name} in ${where} is not supported by this server (it would be ignored); it acts on ${known.join(', ')}`,
        );
      }
    }
  };
  check(`${sdt}//jsdl:JobDescription/*`, readInJobDescription, 'jsdl:JobDescription');
  check(`${sdt}//jsdl:JobDescription/jsdl:Resources/*`, readInResources, 'jsdl:Resources');
  const redundancy = text(terms, `${sdt}//jsdl:Resources/sla:Storage/sla:Redundancy`);
  if (redundancy !== undefined && redundancy !== 'None') {
    throw new UnsupportedTerm(
      `sla:Redundancy ${redundancy} in sla:Storage is not supported by this server (it would be ignored): the ` +
        `nodes' storage is not replicated; leave it out or say None`,
    );
  }
}

/** A reservation window from the OGF advance-reservation profile or the WSAG4J scheduling extension. */
function readWindow(terms: XmlElement): ServiceRequest['window'] {
  const constraint = one(
    terms,
    './/wsag:ServiceDescriptionTerm/arp:AllocationTimeConstraint | ' +
      './/wsag:ServiceDescriptionTerm/wsag4jt:TimeConstraint',
  );
  if (!constraint) return undefined;
  const prefix = constraint.namespaceUri === prefixes.arp ? 'arp' : 'wsag4jt';
  const where = `${prefix}:${constraint.name}`;
  const start = date(text(constraint, '*[local-name()="StartTime"]'), `${prefix}:StartTime`);
  const end = date(text(constraint, '*[local-name()="EndTime"]'), `${prefix}:EndTime`);
  const duration = number(text(constraint, '*[local-name()="Duration"]'), `${prefix}:Duration`, limits.seconds);
  if (!start) throw new InvalidTerms(`${where} needs a StartTime`);
  if (!end && duration === undefined) throw new InvalidTerms(`${where} needs an EndTime or a Duration`);
  const fromDuration = duration !== undefined ? new Date(start.getTime() + duration * 1000) : undefined;
  if (end && fromDuration && end.getTime() !== fromDuration.getTime()) {
    throw new InvalidTerms(
      `${where}: EndTime ${text(constraint, '*[local-name()="EndTime"]')} disagrees with StartTime plus ` +
        `Duration ${duration} s`,
    );
  }
  const windowEnd = (end ?? fromDuration) as Date;
  if (windowEnd.getTime() <= start.getTime())
    throw new InvalidTerms(
      `${where}: ${prefix}:EndTime ${isoTime(windowEnd)} is not after ${prefix}:StartTime ${isoTime(start)}`,
    );
  return { start, end: windowEnd };
}

function readLibrary(e: XmlElement): Library {
  // sla:Library's attributes are unqualified (schemas/sla-terms.xsd); attr() reads Name as wsag:Name.
  const name = (e.eval('string(@Name)') as string).trim();
  return { name, version: attr(e, 'Version') ?? '', loaded: attr(e, 'Loaded') === 'true' || attr(e, 'Loaded') === '1' };
}

export function readGuaranteeTerm(term: XmlElement): GuaranteeTerm {
  const kpiName = text(term, 'wsag:ServiceLevelObjective/wsag:KPITarget/wsag:KPIName') ?? '';
  const levelEl = one(term, 'wsag:ServiceLevelObjective/wsag:KPITarget/wsag:CustomServiceLevel/*');
  let target: KpiTarget = { kind: 'Custom', kpiName };
  if (levelEl && levelEl.namespaceUri === prefixes.sla) {
    const value = levelEl.content.trim();
    switch (levelEl.name) {
      case 'CompletedBy':
        target = { kind: 'CompletedBy', at: date(value, 'sla:CompletedBy') as Date };
        break;
      case 'StartBy':
        target = { kind: 'StartBy', at: date(value, 'sla:StartBy') as Date };
        break;
      case 'NodesAvailable':
        target = {
          kind: 'NodesAvailable',
          nodes: number(value, 'sla:NodesAvailable', limits.nodesAvailable) as number,
        };
        break;
      case 'MaxCheckpointInterval':
        target = { kind: 'MaxCheckpointInterval', interval: value };
        break;
    }
  }
  const bvl = 'wsag:BusinessValueList';
  const name = attr(term, 'Name') ?? '';
  return dropUndefined({
    name,
    submittedBefore: qualifyingCondition(term, name),
    serviceScope: all(term, 'wsag:ServiceScope').map((s) => attr(s, 'ServiceName') ?? ''),
    kpiName,
    target,
    importance: number(text(term, `${bvl}/wsag:Importance`), 'wsag:Importance', limits.importance),
    penalties: all(term, `${bvl}/wsag:Penalty`).map(readCompensation),
    rewards: all(term, `${bvl}/wsag:Reward`).map(readCompensation),
  });
}

/** The one qualifying condition this server evaluates; any other is refused, never ignored. */
function qualifyingCondition(term: XmlElement, name: string): string | undefined {
  const condition = one(term, 'wsag:QualifyingCondition');
  if (!condition) return undefined;
  const submittedBefore = text(condition, 'sla:SubmittedBefore');
  if (submittedBefore === undefined) {
    throw new UnsupportedTerm(
      `guarantee term "${name}": its wsag:QualifyingCondition holds no condition this server evaluates (it ` +
        `evaluates sla:SubmittedBefore)`,
    );
  }
  return submittedBefore;
}

function readCompensation(c: XmlElement): Compensation {
  // No silent terms: a value expression holds what this server evaluates, and nothing else.
  for (const e of all(c, 'wsag:ValueExpression/*')) {
    if (e.namespaceUri !== prefixes.sla || (e.name !== 'Amount' && e.name !== 'Cap')) {
      throw new UnsupportedTerm(
        `wsag:${c.name}/wsag:ValueExpression holds {${e.namespaceUri}}${e.name}; this server evaluates ` +
          `sla:Amount and sla:Cap there`,
      );
    }
  }
  const interval = text(c, 'wsag:AssessmentInterval/wsag:TimeInterval');
  return dropUndefined({
    assessmentInterval:
      interval !== undefined
        ? { timeInterval: interval }
        : { count: number(text(c, 'wsag:AssessmentInterval/wsag:Count'), 'wsag:Count', limits.count) ?? 1 },
    valueUnit: text(c, 'wsag:ValueUnit'),
    amount: number(text(c, 'wsag:ValueExpression/sla:Amount'), 'sla:Amount', limits.money),
    cap: number(text(c, 'wsag:ValueExpression/sla:Cap'), 'sla:Cap', limits.money),
  });
}

/**
 * JSDL range values of `elements` (all the Resources' children of one name, in document
 * order): the first Exact, else the first lower bound of a range; checked against `rule`.
 */
function rangeValue(elements: XmlElement[], element: string, rule: NumberRule): number | undefined {
  const value =
    firstText(elements, 'jsdl:Exact') ??
    firstText(elements, 'jsdl:LowerBoundedRange') ??
    firstText(elements, 'jsdl:Range/jsdl:LowerBound');
  return number(value, element, rule);
}

/** The trimmed text of the first match of `path` under any of `elements`, in their order. */
function firstText(elements: XmlElement[], path: string): string | undefined {
  for (const element of elements) {
    const found = text(element, path);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Elements (in document order) grouped by namespace and local name, each group kept in document order. */
class ChildrenByName {
  private readonly groups = new Map<string, XmlElement[]>();

  constructor(elements: XmlElement[]) {
    for (const element of elements) {
      const key = `${element.namespaceUri} ${element.name}`;
      const group = this.groups.get(key);
      if (group) group.push(element);
      else this.groups.set(key, [element]);
    }
  }

  all(namespace: string, name: string): XmlElement[] {
    return this.groups.get(`${namespace} ${name}`) ?? [];
  }

  first(namespace: string, name: string): XmlElement | undefined {
    return this.all(namespace, name)[0];
  }

  text(namespace: string, name: string): string | undefined {
    return this.first(namespace, name)?.content.trim();
  }
}

/** WS-Agreement attributes are namespace-qualified (wsag:Name); our term language's are not. */
export function attr(e: XmlElement, name: string): string | undefined {
  const path = ['Name', 'ServiceName'].includes(name) ? `@wsag:${name}` : `@${name}`;
  const found = evaluate(e, path);
  return Array.isArray(found) && found[0] ? found[0].content : undefined;
}

function optionalList(values: string[]): string[] | undefined {
  return values.length > 0 ? values : undefined;
}

function mib(bytes: number | undefined): number | undefined {
  return bytes === undefined ? undefined : Math.round(bytes / (1024 * 1024));
}
