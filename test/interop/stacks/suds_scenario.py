"""The interop scenario with Python suds (Debian python3-suds), from the WSDLs alone.

Usage: suds_scenario.py '{"base": "http://127.0.0.1:PORT", "terms": "<wsag:All ...>"}'
Prints one JSON line: what suds saw at each step (test/interop/soap-stacks.test.ts checks it).

suds reads the SOAP 1.1 view of each WSDL (?wsdl&soap=1.1): it speaks SOAP 1.1 only. Everything
is typed from the WSDLs (templates, EPRs, the srv:AgreementId and srv:NegotiationId headers,
quotes, holds, faults) except two wildcards suds cannot fill with typed values: the terms'
content (wsag:Terms, given as XML) and the wsag-neg:NegotiationExtension in the accepting
offer's Context (a suds Element, added by a MessagePlugin: suds empties an Element assigned to a
wildcard). suds writes attributes unqualified, so the offers leave out the optional
wsag-neg:OfferId (the server assigns one).
"""
import json
import logging
import sys

from suds import WebFault
from suds.client import Client
from suds.plugin import MessagePlugin
from suds.sax.element import Element
from suds.sax.text import Raw

WSAG = "http://schemas.ggf.org/graap/2007/03/ws-agreement"
NEG = "http://schemas.ogf.org/graap/2009/11/ws-agreement-negotiation"
PORTS = ["AgreementFactory", "PendingAgreementFactory", "AgreementAcceptance", "Agreement", "AgreementState",
         "NegotiationFactory", "Negotiation"]


class Warnings(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


class ContextExtension(MessagePlugin):
    """Appends an element to the next outgoing offer's wsag:Context wildcard."""

    def __init__(self):
        self.element = None

    def marshalled(self, context):
        if self.element is None:
            return
        offer = context.envelope.childAtPath("Body/CreateAgreementInput/AgreementOffer/Context")
        offer.append(self.element)
        self.element = None


def main(base, terms):
    result = {"stack": "suds"}
    warnings = Warnings()
    logging.getLogger("suds").addHandler(warnings)
    extend = ContextExtension()
    clients = {port: Client(f"{base}/wsag/{port}?wsdl&soap=1.1", cache=None, plugins=[extend]) for port in PORTS}
    result["loaded"] = sorted(clients)
    result["warnings"] = warnings.messages

    factory, state, agreement = clients["AgreementFactory"], clients["AgreementState"], clients["Agreement"]
    templates = factory.service.GetResourcePropertyDocument().Template
    result["templates"] = sorted(str(t.Name) for t in templates)
    template = next(t for t in templates if t.Name == "advance-reservation")

    def offer_for(client, element, context):
        offer = client.factory.create(element)
        offer.Name = template.Name
        for name in ("AgreementInitiator", "AgreementResponder", "ServiceProvider", "TemplateId", "TemplateName"):
            value = getattr(context, name, None)
            if value is not None:
                setattr(offer.Context, name, value)
        offer.Terms = Raw(terms)
        return offer

    def agreement_state(agreement_id):
        state.set_options(soapheaders={"AgreementId": agreement_id})
        return str(state.service.GetResourcePropertyDocument().AgreementState.State)

    # One-shot: create, read the state through the typed header, terminate.
    created = factory.service.CreateAgreement(AgreementOffer=offer_for(factory, f"{{{WSAG}}}AgreementOffer", template.Context))
    agreement_id = str(created.CreatedAgreementEPR.ReferenceParameters.AgreementId[0])
    result["created"] = {"address": str(created.CreatedAgreementEPR.Address), "state": agreement_state(agreement_id)}
    agreement.set_options(soapheaders={"AgreementId": agreement_id})
    agreement.service.Terminate()
    result["terminated"] = agreement_state(agreement_id)

    # Negotiation: Advisory slots with their quotes, a Solicited offer held, accepted.
    initiate = clients["NegotiationFactory"]
    context = initiate.factory.create(f"{{{NEG}}}NegotiationContextType")
    context.NegotiationType.Negotiation = ""
    context.AgreementResponder = "NegotiationResponder"
    negotiation_epr = initiate.service.InitiateNegotiation(NegotiationContext=context).CreatedNegotiationEPR
    negotiation = clients["Negotiation"]
    negotiation.set_options(soapheaders={"NegotiationId": str(negotiation_epr.ReferenceParameters.NegotiationId[0])})

    def negotiation_offer(counter_offer_to, offer_state):
        offer = offer_for(negotiation, f"{{{NEG}}}NegotiationOffer", template.Context)
        offer.NegotiationOfferContext.CounterOfferTo = counter_offer_to
        offer.NegotiationOfferContext.Creator = "NegotiationInitiator"
        setattr(offer.NegotiationOfferContext.State, offer_state, "")
        return offer

    def summary(counter_offer):
        context = counter_offer.NegotiationOfferContext
        states = [s for s in ("Advisory", "Solicited", "Acceptable", "Rejected") if getattr(context.State, s, None) is not None]
        quote = (getattr(context, "Quote", None) or [None])[0]
        price = quote.Price[0] if quote is not None else None
        return {
            "offerId": str(counter_offer._OfferId),
            "state": states[0] if states else None,
            "expirationTime": getattr(context, "ExpirationTime", None) and context.ExpirationTime.isoformat(),
            "price": None if price is None else {"amount": float(price.value), "currency": str(price._Currency)},
        }

    advisory = [summary(c) for c in negotiation.service.Negotiate(
        NegotiationOffer=[negotiation_offer(template.Context.TemplateId, "Advisory")]).NegotiationCounterOffer]
    result["advisory"] = advisory
    acceptable = negotiation.service.Negotiate(
        NegotiationOffer=[negotiation_offer(advisory[0]["offerId"], "Solicited")]).NegotiationCounterOffer[0]
    result["solicited"] = summary(acceptable)

    extension = Element("NegotiationExtension", ns=("neg", NEG))
    offer_context = Element("NegotiationOfferContext", ns=("neg", NEG))
    offer_context.append(Element("CounterOfferTo", ns=("neg", NEG)).setText(str(acceptable._OfferId)))
    offer_context.append(Element("Creator", ns=("neg", NEG)).setText("NegotiationInitiator"))
    offer_state = Element("State", ns=("neg", NEG))
    offer_state.append(Element("Acceptable", ns=("neg", NEG)))
    offer_context.append(offer_state)
    extension.append(offer_context)
    accepting = offer_for(factory, f"{{{WSAG}}}AgreementOffer", acceptable.Context)
    extend.element = extension
    accepted = factory.service.CreateAgreement(AgreementOffer=accepting)
    accepted_id = str(accepted.CreatedAgreementEPR.ReferenceParameters.AgreementId[0])
    result["accepted"] = {"agreementId": accepted_id, "state": agreement_state(accepted_id)}

    # A typed fault: the BaseFault detail as the WSDL declares it.
    agreement.set_options(soapheaders={"AgreementId": "no-such-agreement"})
    try:
        agreement.service.Terminate()
        result["fault"] = None
    except WebFault as fault:
        result["fault"] = {"code": str(fault.fault.detail.BaseFault.ErrorCode.value)}
    return result


if __name__ == "__main__":
    arguments = json.loads(sys.argv[1])
    try:
        print(json.dumps(main(arguments["base"], arguments["terms"])))
    except Exception as error:  # the harness shows what failed
        print(json.dumps({"stack": "suds", "error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)
