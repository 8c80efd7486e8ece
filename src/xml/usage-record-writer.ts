import type { UsageRecord } from '../domain/usage.js';
import { escapeXml } from './escape.js';

export const urNs = 'http://schema.ogf.org/urf/2003/09/urf';

/**
 * A usage record as an OGF Usage Record (GFD.98, `ur:JobUsageRecord`), in the order the
 * schema's sequence wants: identity, job, user, name, charge, status, then the measured
 * properties. Valid against the OGF schema (test/reference/usage-record/urf.xsd) (tested with xmllint).
 */
export function usageRecordXml(r: UsageRecord): string {
  const e = (name: string, value: string | number, attributes = '') =>
    `<ur:${name}${attributes}>${escapeXml(String(value))}</ur:${name}>`;
  return [
    `<ur:JobUsageRecord xmlns:ur="${urNs}">`,
    `<ur:RecordIdentity ur:recordId="${escapeXml(r.recordId)}" ur:createTime="${iso(r.createdAt)}"/>`,
    `<ur:JobIdentity>${e('GlobalJobId', r.globalJobId)}${e('LocalJobId', r.agreementId)}</ur:JobIdentity>`,
    `<ur:UserIdentity>${e('GlobalUserName', r.user)}</ur:UserIdentity>`,
    r.jobName !== undefined ? e('JobName', r.jobName) : '',
    r.charge ? e('Charge', r.charge.amount.toFixed(2), ` ur:unit="${escapeXml(r.charge.currency)}"`) : '',
    e('Status', r.status),
    e('ServiceLevel', r.guaranteeLevel, ' ur:type="GuaranteeLevel"'),
    r.wallSeconds !== undefined ? e('WallDuration', `PT${r.wallSeconds}S`) : '',
    e('NodeCount', Math.max(1, r.nodes)),
    r.processors !== undefined && r.processors > 0 ? e('Processors', r.processors) : '',
    r.end ? e('EndTime', iso(r.end)) : '',
    r.start ? e('StartTime', iso(r.start)) : '',
    e('MachineName', r.machine),
    r.project !== undefined ? e('ProjectName', r.project) : '',
    '</ur:JobUsageRecord>',
  ].join('');
}

function iso(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
