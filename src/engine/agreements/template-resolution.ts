import type { AgreementTemplate } from '../../domain/template.js';
import { UnknownTemplate } from '../../domain/errors.js';
import type { ReceivedOffer, TemplateCatalog } from '../ports.js';

/**
 * The template an offer's Context names (wsag:TemplateId and/or wsag:TemplateName), or UnknownTemplate listing the
 * known ones.
 */
export function templateOf(
  templates: TemplateCatalog,
  offer: Pick<ReceivedOffer, 'templateId' | 'templateName'>,
): AgreementTemplate {
  const { templateId, templateName } = offer;
  if (templateId === undefined && templateName === undefined) {
    throw new UnknownTemplate('the offer names no template: wsag:Context needs wsag:TemplateId or wsag:TemplateName');
  }
  const template = templates.find({ id: templateId, name: templateName });
  if (!template) {
    const known = templates
      .list()
      .map((t) => `${t.name} (id ${t.id})`)
      .join(', ');
    const asked = [
      templateId !== undefined && `TemplateId "${templateId}"`,
      templateName !== undefined && `TemplateName "${templateName}"`,
    ]
      .filter(Boolean)
      .join(' and ');
    throw new UnknownTemplate(`no template with ${asked}; known: ${known}`);
  }
  return template;
}
