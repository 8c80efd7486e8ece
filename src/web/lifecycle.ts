import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { Agreement } from '../domain/agreement.js';
import { CreationConstraintViolation, MalformedMessage, UnknownResource, UnknownTemplate } from '../domain/errors.js';
import type { Caller } from '../domain/identity.js';
import { didYouMean } from '../domain/suggest.js';
import type { AgreementFactory, AgreementService } from '../engine/agreements/index.js';
import { paths } from '../soap/agreement-ports.js';
import { readAgreementOfferInput } from '../soap/agreement-offer-input.js';
import { checkedSettings, settable, TemplateValueError, valuesInWords } from '../xml/item-values.js';
import { withXml } from '../xml/libxml.js';
import { ns } from '../xml/namespaces.js';
import { offerFromTemplate } from '../xml/offer-from-template.js';
import type { TemplateLibrary } from '../xml/template-library.js';
import { summarizeTemplate, type TemplateSummary } from '../xml/template-summary.js';
import { declaredBodyWithin } from './error-boundary.js';
import { jsonBody } from './json-body.js';
import { validBody } from './openapi/validation.js';
import { sendProblem } from './problem.js';
import { agreementSummary } from './summaries.js';

export interface LifecycleOptions {
  factory: AgreementFactory;
  agreements: AgreementService;
  templates: TemplateLibrary;
  /** The largest body read (an offer document may be sent whole). */
  maxBodyBytes: number;
  baseUrl: (req: Request) => string;
  now: () => Date;
}

interface CreateAgreementBody {
  template?: string;
  items?: Record<string, string | number | boolean>;
  offer?: string;
  pending?: boolean;
}

/**
 * The agreement lifecycle over JSON, calling the use cases the SOAP ports call
 * (AgreementFactory, AgreementService): the templates with the Items a value sets, an
 * agreement made from a template and item values or from an offer document, and its
 * termination. Every agreement answered carries the links to read it again and to audit its
 * signed document.
 */
export function lifecycleRouter(options: LifecycleOptions, caller: (req: Request) => Caller, logger?: Logger): Router {
  const router = express.Router();
  const answer =
    (what: string, produce: (req: Request) => Promise<unknown> | unknown, status = 200) =>
    async (req: Request, res: Response) => {
      try {
        const body = await produce(req);
        res.status(status).json(body);
      } catch (error) {
        sendProblem(res, error, what, logger);
      }
    };
  const served = () => options.templates.render(options.now()).map(summarizeTemplate);
  const template = (ref: string, unknown: (message: string) => Error): TemplateSummary => {
    const templates = served();
    const found = templates.find((t) => t.name === ref) ?? templates.find((t) => t.id === ref);
    if (found) return found;
    throw unknown(
      `no template "${ref}"${didYouMean(
        ref,
        templates.map((t) => t.name),
      )}; the server offers: ${templates.map((t) => `${t.name} (id ${t.id})`).join(', ') || 'none'}`,
    );
  };
  const view = (req: Request, agreement: Agreement) => agreementView(agreement, options.baseUrl(req));

  router.get(
    '/api/templates',
    answer('listing templates', (req) => {
      caller(req);
      return { templates: served().map(templateView) };
    }),
  );
  router.get(
    '/api/templates/:id',
    answer('reading a template', (req) => {
      caller(req);
      return templateView(template(String(req.params.id), (m) => new UnknownResource(m)));
    }),
  );
  router.get('/api/templates/:id/document', (req, res) => {
    try {
      caller(req);
      res.type('application/xml').send(template(String(req.params.id), (m) => new UnknownResource(m)).xml);
    } catch (error) {
      sendProblem(res, error, 'reading a template document', logger);
    }
  });
  router.post(
    '/api/agreements',
    declaredBodyWithin(options.maxBodyBytes),
    express.text({ type: () => true, limit: options.maxBodyBytes }),
    answer(
      'creating an agreement',
      async (req) => {
        const who = caller(req);
        const body = validBody<CreateAgreementBody>('createAgreement', jsonBody(req));
        const offer = readOffer(offerOf(body, (ref) => template(ref, (m) => new UnknownTemplate(m))));
        const agreement = body.pending
          ? await options.factory.createPendingAgreement(offer, who)
          : await options.factory.createAgreement(offer, who);
        return view(req, agreement);
      },
      201,
    ),
  );
  router.post(
    '/api/agreements/:id/terminate',
    answer('terminating an agreement', async (req) =>
      view(req, await options.agreements.terminate(String(req.params.id), caller(req))),
    ),
  );
  return router;
}

/** The offer a create asks for: the template with the item values set, or the document sent. */
function offerOf(body: CreateAgreementBody, template: (ref: string) => TemplateSummary): string {
  if (body.offer !== undefined) {
    if (body.template !== undefined || body.items !== undefined)
      throw new MalformedMessage('give a template with its items, or an offer document, not both');
    return body.offer;
  }
  if (body.template === undefined)
    throw new MalformedMessage('give "template" (its Name or TemplateId, with "items") or "offer" (a document)');
  const chosen = template(body.template);
  const settings = Object.entries(body.items ?? {}).map(([location, value]) => ({ location, value: String(value) }));
  try {
    return offerFromTemplate(chosen.xml, checkedSettings(chosen, settings, 'item '));
  } catch (error) {
    if (error instanceof TemplateValueError) throw new CreationConstraintViolation(error.message);
    throw error;
  }
}

/** An offer document read as CreateAgreement reads its Body's: checked against the same schemas. */
function readOffer(offerXml: string) {
  const document = offerXml.replace(/^\s*<\?xml[^>]*\?>/, '');
  return withXml(
    `<wsag:CreateAgreementInput xmlns:wsag="${ns.wsag}">${document}</wsag:CreateAgreementInput>`,
    'the offer',
    (doc) => readAgreementOfferInput(doc.root, 'CreateAgreementInput'),
  );
}

function templateView(t: TemplateSummary) {
  const self = `/api/templates/${encodeURIComponent(t.id)}`;
  return {
    id: t.id,
    name: t.name,
    items: t.items.map((item) => ({
      name: item.name,
      ...(item.value !== undefined ? { value: item.value } : {}),
      settable: settable(item),
      takes: settable(item) ? valuesInWords(item) : 'set by no value (it shapes the offer)',
      constraint: item.constraint,
    })),
    ...(t.window ? { window: t.window } : {}),
    links: { self, document: `${self}/document` },
  };
}

/** An agreement as the JSON face answers it: its summary and where to read it, its signed document and its EPR. */
export function agreementView(agreement: Agreement, baseUrl: string) {
  const self = `/api/agreements/${encodeURIComponent(agreement.id)}`;
  return {
    ...agreementSummary(agreement),
    links: { self, document: `${self}/document`, epr: `${baseUrl}${paths.Agreement}` },
  };
}
